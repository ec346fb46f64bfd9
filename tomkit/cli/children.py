"""The child processes a command started, ended when the command is stopped.

A JVM that pyspark starts dies when its stdin (a pipe from Python) closes, but only once
its gateway is up: ``tomkit scan`` stopped by SIGTERM while the JVM started left it
running for good (its connection file's folder was gone, its main thread failed, its
other threads kept it alive; measured: still there after 300 s). The command notes its
children before it starts any and ends the ones that are new when it is stopped, so a
JVM that existed before (a program's own Spark session, running ``tomkit.cli.main`` in
its process) is left alone.

Linux's ``/proc`` (as the recorders' ``prctl`` in tomkit/record/log.py): psutil would
do the same, but is no dependency of tomkit for these few lines.
"""

from __future__ import annotations

import os
import signal
import time

__all__ = ["children", "end_new"]


def children() -> set[int]:
    """The pids of this process's live children (none where there is no /proc)."""
    me, found = os.getpid(), set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def end_new(before: set[int], grace: float = 5.0) -> list[int]:
    """End the children started since ``before`` was taken: SIGTERM, then SIGKILL for
    those still alive after ``grace`` seconds (a JVM's shutdown hooks may hang); the
    pids ended."""
    new = sorted(children() - before)
    for pid in new:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = set(new)
    while left and time.monotonic() < deadline:
        left &= children()
        if left:
            time.sleep(0.05)
    for pid in left:
        _signal(pid, signal.SIGKILL)
    for pid in new:  # reaped here: the Popen that started it is never waited for now
        try:
            os.waitpid(pid, 0 if pid in left else os.WNOHANG)
        except ChildProcessError:
            pass
    return new


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
