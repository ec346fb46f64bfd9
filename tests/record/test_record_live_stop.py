"""``python -m tomkit.record SYSTEM --watch`` stopped at a random moment (seeded): Ctrl-C
(SIGINT to the process group, as a terminal sends it) and ``kill -9``. Each ends with
its exit code; the records so far are kept whole (the cut file, the live file), and no
process is left: not the live ``tomkit watch``, not the system under test. A stand-in
system (live_stand_in.py: a thread logging events as a recorder's clients do, and a
child process standing for the system's servers), run in a real recorder process."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tomkit.traces.errors import TraceFormatError
from tomkit.traces.reader import read_records

BOUND = 300.0  # seconds: a loaded machine starts Python slowly


def left(sid: int, folder: Path) -> list[str]:
    """The live processes of session ``sid`` (the recorder's, the server's) and those
    naming ``folder`` (the live watch, in a session of its own)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if fields[0] != "Z" and (int(fields[3]) == sid or
                                     (str(folder) in cmd and "tomkit" in cmd)):
                found.append(f"{entry} {cmd[:150]}")
    return found


# (SIGTERM to the recorder alone takes the path of Ctrl-C here: the live watch, in a
# session of its own, gets neither, and the recorder ends it; the recorder's own SIGTERM
# is tested in-process, test_record_cut_short.py. Two runs: each costs two processes'
# start, seconds of CPU)
@pytest.mark.parametrize("how, seed", [("ctrl-c", 1), ("kill -9", 3)])
def test_a_live_recording_stopped_leaves_whole_records_and_no_process(tmp_path, how, seed):
    here = str(Path(__file__).parent)
    cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {here!r}); "
           "sys.argv = ['python -m tomkit.record', 'etcd', '--watch', '--timeout', '600', "
           f"'--out', {str(tmp_path)!r}]; import live_stand_in; live_stand_in.main()"]
    live = tmp_path / "etcd-clean-s1.live.jsonl"
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        deadline = time.monotonic() + BOUND
        while p.poll() is None and time.monotonic() < deadline and \
                not (live.exists() and live.stat().st_size > 0):
            time.sleep(0.05)
        assert p.poll() is None, p.communicate()
        time.sleep(random.Random(seed).uniform(0.0, 1.0))
        if how == "ctrl-c":
            os.killpg(p.pid, signal.SIGINT)
        else:
            os.kill(p.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=BOUND)
        while left(p.pid, tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left(p.pid, tmp_path)  # the live watch and the server ended with it
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    if how == "kill -9":
        assert p.returncode == -signal.SIGKILL
        # killed mid-write, the live file may end in a line cut short: as such, not as
        # a record lost without a word (checker/stream/follow.py, traces/jsonl.py)
        try:
            read_records(live)
        except TraceFormatError as e:
            assert e.location.line == len(live.read_bytes().split(b"\n"))
            assert "a line cut short" in str(e) and e.field is not None
        return
    assert p.returncode == 130, err
    assert "python -m tomkit.record: interrupted" in err.splitlines()
    assert "Traceback" not in err and "Fatal Python error" not in err
    assert "  watch: exit " in out  # the live watch was waited for
    cut = tmp_path / "etcd-clean-s1.cut.jsonl.gz"
    kept = read_records(cut)
    assert f"wrote the {len(kept):,} records recorded so far, each whole, to {cut}" in err
    # every record logged is in the live file, whole, as in the cut file
    assert [r["msg"] for r in read_records(live)] == [r["msg"] for r in kept]
