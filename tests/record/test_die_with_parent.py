"""die_with_parent: a recorder's child dies with the recorder, even when the recorder
is killed between the fork and the child's prctl (the race a loaded run met)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tomkit.record.log import die_with_parent

#: forks a child, then dies at once: the child arms the signal only after its parent is
#: gone (the race, made certain), and notes whether die_with_parent let it live on
ORPHAN = """
import os, sys, time
from tomkit.record.log import die_with_parent
out = sys.argv[1]
parent = os.getpid()
if os.fork() == 0:
    with open(out + ".pid", "w") as f:
        f.write(str(os.getpid()))
    while os.getppid() == parent:
        time.sleep(0.01)
    die_with_parent()
    with open(out + ".survived", "w") as f:
        f.write("yes")
    time.sleep(600)
os._exit(0)
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            # a zombie waiting for init to reap it is gone as far as anyone can tell
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_child_of_a_live_parent_runs_on():
    done = subprocess.run([sys.executable, "-c", "print('ran')"], capture_output=True,
                          text=True, preexec_fn=die_with_parent, timeout=120)
    assert (done.returncode, done.stdout) == (0, "ran\n")


def test_a_child_started_from_a_thread_runs_on():
    # the recorders start servers from fault threads: the forker noted is the process
    box = {}

    def start():
        box["done"] = subprocess.run(["true"], preexec_fn=die_with_parent, timeout=120)

    t = threading.Thread(target=start)
    t.start()
    t.join()
    assert box["done"].returncode == 0


def test_a_child_whose_parent_died_before_prctl_kills_itself(tmp_path: Path):
    out = tmp_path / "child"
    subprocess.run([sys.executable, "-c", ORPHAN, str(out)], check=True, timeout=120)
    pid_file = Path(f"{out}.pid")
    deadline = time.monotonic() + 120
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    pid = int(pid_file.read_text())
    try:
        while not _gone(pid) and not Path(f"{out}.survived").exists():
            assert time.monotonic() < deadline, "the orphan neither died nor went on"
            time.sleep(0.05)
        assert not Path(f"{out}.survived").exists(), "the orphan outlived its parent"
    finally:
        if not _gone(pid):
            os.kill(pid, 9)
