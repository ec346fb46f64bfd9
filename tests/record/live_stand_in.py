"""A stand-in system for python -m tomkit.record, run in a real recorder process by
test_record_live_stop.py (imports nothing more than a recorder does)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from tomkit.record.log import EventLog, die_with_parent
from tomkit.record.system import System


def _record(run, path, *, seed, timeout):
    # the system's server, started as the recorders start theirs (it dies with them)
    # (Ctrl-C ends it quietly, as a server's own handler does: no Python traceback)
    server = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal("
                               "signal.SIGINT, signal.SIG_DFL); time.sleep(600)"],
                              preexec_fn=die_with_parent)
    log = EventLog(f"etcd-clean-s{seed}")
    done = threading.Event()

    def client() -> None:
        i = 0
        while not done.is_set() and log.add(f"p{i % 2}", "send", msg=f"m{i}",
                                            x_pad="x" * (i % 50 * 40)) is not None:
            i += 1
            time.sleep(0.002)

    t = threading.Thread(target=client, daemon=True)
    t.start()
    try:
        time.sleep(timeout)
    finally:
        done.set()
        log.freeze()
        server.terminate()
        server.wait()
    log.write(path)
    return log


SYSTEM = System("etcd", {"clean": object()}, (), _record, lambda: None, profile="etcd")


def main() -> None:
    """The recorder's process: python -m tomkit.record with the stand-in system."""
    import tomkit.record.__main__ as record_main

    record_main.recorder = lambda name: SYSTEM
    sys.exit(record_main.main())
