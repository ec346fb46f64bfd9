"""The harness against misbehaving nodes: every failure a clear error or a recorded
fault, never a hung harness, and no node process left behind."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from maelstrom_nodes import shipped, write

from tomkit.maelstrom.harness import HarnessError, RunConfig, run

#: short runs; the bound on a node's answer to init is generous (Python nodes start slowly
#: on a loaded machine, and only the test of the init timeout itself waits it out)
FAST = {"time_limit": 1.0, "rate": 40.0, "timeout": 0.5, "recovery": 0.0,
        "init_timeout": 60.0}


def config(tmp_path, argv, workload="echo", **kw):
    return RunConfig(workload=workload, bin=argv, node_count=kw.pop("node_count", 2),
                     out=tmp_path / "run", seed=kw.pop("seed", 1), **{**FAST, **kw})


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_echo_node_is_valid(tmp_path):
    res = run(config(tmp_path, shipped("echo")))
    assert res.valid, res.to_dict()
    # a loaded machine may answer an echo after the client's timeout: info, never fail
    assert res.stats["ok"] > 0 and res.stats["fail"] == 0
    assert res.verdicts == {"integrity": "holds", "validity": "holds"}
    folder = tmp_path / "run"
    for name in ("trace.jsonl", "history.jsonl", "messages.jsonl", "results.json",
                 "nodes/n0.log", "nodes/n1.log"):
        assert (folder / name).exists(), name
    assert "n0 initialised" in (folder / "nodes/n0.log").read_text()
    hist = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    assert {"invoke", "ok"} <= {h["type"] for h in hist} <= {"invoke", "ok", "info"}


def test_wrong_echo_is_caught(tmp_path):
    res = run(config(tmp_path, shipped("echo", "wrong")))
    assert not res.valid
    assert res.verdicts["integrity"] == "violated"
    assert "(changed)" in res.explanations["integrity"]


def test_invalid_json_names_node_and_line(tmp_path):
    with pytest.raises(HarnessError, match=r"node n\d, stdout line 1: invalid JSON.*"
                       r"hello, I am not JSON"):
        run(config(tmp_path, write(tmp_path, "bad_json")))


def test_stderr_only_node_times_out_init_and_shows_its_stderr(tmp_path):
    t = time.monotonic()
    with pytest.raises(HarnessError, match=r"did not answer init.*within 3 s[\s\S]*"
                       "I only ever talk here"):
        run(config(tmp_path, write(tmp_path, "stderr_only"), init_timeout=3.0))
    assert time.monotonic() - t < 60
    assert "I only ever talk here" in (tmp_path / "run/nodes/n0.log").read_text()


def test_node_that_exits_before_init(tmp_path):
    with pytest.raises(HarnessError, match=r"exited with code 3 before answering init"
                       r"[\s\S]*giving up"):
        run(config(tmp_path, write(tmp_path, "exits")))


def test_program_that_cannot_run(tmp_path):
    with pytest.raises(HarnessError, match="cannot run the node program"):
        run(config(tmp_path, [str(tmp_path / "no-such-node")]))


def test_crash_is_a_recorded_fault_and_judged(tmp_path):
    res = run(config(tmp_path, write(tmp_path, "crash")))
    assert not res.valid
    assert any(a.name == "crash" for a in res.anomalies)
    assert any("exited on its own with code 1" in f for f in res.faults)
    text = (tmp_path / "run/trace.jsonl").read_text()
    kinds = [json.loads(line).get("kind") for line in text.splitlines()]
    assert "crash" in kinds


def test_hanging_node_is_timed_out_and_killed_with_its_children(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    t = time.monotonic()
    res = run(config(tmp_path, write(tmp_path, "hang")))
    assert time.monotonic() - t < 300  # a bound, not a target: the machine may be loaded
    assert res.stats["info"] > 0 and res.stats["ok"] == 0
    assert res.verdicts["validity"] == "violated"  # requests received, never answered
    found = [int(x) for line in pids.read_text().split("\n") if line for x in line.split()]
    assert len(found) == 4  # two nodes, a child each
    deadline = time.monotonic() + 60
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in found if alive(p)]


def test_flood_stops_the_run_with_an_error(tmp_path):
    # the time limit is far away: only the flood can end this run (however slow the machine)
    t = time.monotonic()
    with pytest.raises(HarnessError, match="n0 floods the network"):
        run(config(tmp_path, write(tmp_path, "flood"), node_count=1, max_messages=3000,
                   time_limit=120.0))
    assert time.monotonic() - t < 120


def test_unknown_destination_is_a_recorded_fault(tmp_path):
    res = run(config(tmp_path, write(tmp_path, "unknown")))
    assert res.valid  # the echoes are right; the fault is reported, not a violation
    assert any("'n99', which names no node" in f for f in res.faults)
    text = (tmp_path / "run/messages.jsonl").read_text()
    replies = [json.loads(line) for line in text.splitlines()]
    assert any(r["src"] == "n99" and r["body"]["code"] == 1 for r in replies)


@pytest.mark.parametrize("sig, code, said", [
    (signal.SIGINT, 130, b"tomkit run: interrupted; every node was stopped"),
    # SIGTERM (kill, timeout) as Ctrl-C: the harness's own handler cancels the run
    (signal.SIGTERM, 143, b"tomkit run: terminated (SIGTERM); every node was stopped")])
def test_ctrl_c_ends_every_node(tmp_path, sig, code, said):
    pids = tmp_path / "pids"
    # faulthandler: if the run outlives the bound, SIGABRT makes it print every thread's
    # stack, so that a hang seen once on a loaded machine says where it hung
    env = {**os.environ, "PIDS": str(pids), "PYTHONFAULTHANDLER": "1"}
    argv = [sys.executable, "-m", "tomkit", "run", "-w", "echo", "--bin",
            *write(tmp_path, "hang"), "--node-count", "2", "--time-limit", "60",
            "--out", str(tmp_path / "run"), "--seed", "1"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while (not pids.exists() or len(pids.read_text().split("\n")) < 3) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(sig)
    try:  # a bound, not a target: the run stops two nodes (SIGTERM, then SIGKILL after 2 s)
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"tomkit run outlived {sig.name} by 180 s; its stacks:\n" + err.decode())
    assert proc.returncode == code, err
    assert said in err and b"keeps the node logs" in err
    # every node's transport closed before the loop: none left to the garbage collector,
    # which printed "Exception ignored ... Event loop is closed" after about one Ctrl-C in 3
    assert b"Exception ignored" not in err, err
    found = [int(x) for line in pids.read_text().split("\n") if line for x in line.split()]
    deadline = time.monotonic() + 60
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in found if alive(p)]


START_CANCELLED = """
import asyncio, sys
from pathlib import Path
from tomkit.maelstrom import node_process as np_

async def main(k, d):
    asyncio.ensure_future(np_.start_node(
        [sys.executable, "-c", "import time; time.sleep(60)"], "n0", 0, Path(d) / "n.log",
        lambda *a: None, lambda *a: None, lambda *a: None))
    for _ in range(k):
        await asyncio.sleep(0)
    for p in await np_.settle():  # as the harness does when a Ctrl-C ends its run
        assert await p.stop(2.0) is not None
    # returning leaves the start's task to asyncio.run's close, which cancels it

for k in range(8):
    asyncio.run(main(k, sys.argv[1]))
print("ended")
"""


def test_a_run_ended_while_a_node_starts_closes_its_loop(tmp_path):
    """asyncio.run's close cancels the tasks left, and Python 3.11's subprocess_exec,
    cancelled while it connects a process's pipes, waited for ever (a Ctrl-C during a
    loaded run's start-up hung `tomkit run`, seen in a suite run): a start is finished
    (node_process.settle) and its process stopped, at every turn of the loop it may be
    at when the run ends."""
    res = subprocess.run([sys.executable, "-c", START_CANCELLED, str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ended", res.stderr
    assert "Exception ignored" not in res.stderr, res.stderr
