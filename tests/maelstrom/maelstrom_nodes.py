"""Small misbehaving node programs for the harness's tests, written to a folder."""

import sys
import textwrap
from pathlib import Path

NODES = Path(__file__).resolve().parents[2] / "tomkit" / "maelstrom" / "nodes"

#: a node body's prelude: read lines, answer init, call handle(msg) for the rest
PRELUDE = '''
import json, os, sys, time, subprocess
node = None
def send(dest, body):
    sys.stdout.write(json.dumps({"src": node, "dest": dest, "body": body}) + "\\n")
    sys.stdout.flush()
'''

SCRIPTS = {
    "bad_json": PRELUDE + '''
sys.stdout.write("hello, I am not JSON\\n"); sys.stdout.flush()
for line in sys.stdin: pass
''',
    "stderr_only": PRELUDE + '''
print("starting up, and I only ever talk here", file=sys.stderr, flush=True)
for line in sys.stdin:
    print("got", line.strip()[:40], file=sys.stderr, flush=True)
''',
    "exits": PRELUDE + '''
print("giving up", file=sys.stderr, flush=True)
sys.exit(3)
''',
    # answers init, then crashes on its first echo
    "crash": PRELUDE + '''
for line in sys.stdin:
    m = json.loads(line); b = m["body"]
    if b["type"] == "init":
        node = b["node_id"]; send(m["src"], {"type": "init_ok", "in_reply_to": b["msg_id"]})
    else:
        sys.exit(1)
''',
    # answers init, then never anything; records its pid and a child's in PIDS
    "hang": PRELUDE + '''
child = subprocess.Popen(["sleep", "300"])
with open(os.environ.get("PIDS", "/dev/null"), "a") as f:
    f.write(f"{os.getpid()} {child.pid}\\n")
for line in sys.stdin:
    m = json.loads(line); b = m["body"]
    if b["type"] == "init":
        node = b["node_id"]; send(m["src"], {"type": "init_ok", "in_reply_to": b["msg_id"]})
''',
    # answers init, then writes to itself without end
    "flood": PRELUDE + '''
for line in sys.stdin:
    m = json.loads(line); b = m["body"]
    if b["type"] == "init":
        node = b["node_id"]; send(m["src"], {"type": "init_ok", "in_reply_to": b["msg_id"]})
        while True:
            send(node, {"type": "spam", "payload": "x" * 100})
''',
    # echoes, and tells a node that does not exist about it
    "unknown": PRELUDE + '''
n = 0
for line in sys.stdin:
    m = json.loads(line); b = m["body"]
    if b["type"] == "init":
        node = b["node_id"]; send(m["src"], {"type": "init_ok", "in_reply_to": b["msg_id"]})
    elif b["type"] == "echo":
        n += 1
        send("n99", {"type": "gossip", "msg_id": n})
        send(m["src"], {"type": "echo_ok", "echo": b["echo"], "in_reply_to": b["msg_id"]})
''',
}


def write(folder: Path, name: str) -> list[str]:
    """Write the node ``name`` into ``folder``; the --bin argv that runs it."""
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(SCRIPTS[name]))
    return [sys.executable, str(path)]


def shipped(name: str, *args: str) -> list[str]:
    """The argv of an example node shipped in tomkit/maelstrom/nodes/."""
    return [sys.executable, str(NODES / f"{name}.py"), *args]
