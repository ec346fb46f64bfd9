"""One server process of a recorded system: started, killed, paused and restarted by the
recorder, with its output in a log file of the run's folder.

The fault schedule (:mod:`tomkit.record.faults`) acts on servers through this class;
every server dies with the recorder (``PR_SET_PDEATHSIG``), and :meth:`Server.stop`
ends it at the end of a run, also after a pause (a stopped process is continued before
it is killed, so that it does not linger as a zombie's child).
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from tomkit.record.log import die_with_parent

__all__ = ["Server"]


class Server:
    """A system's server process: ``argv`` run with its output in ``logfile``."""

    def __init__(self, name: str, argv: list[str], logfile: Path, env: dict | None = None,
                 cwd: Path | None = None, hold_stdin: bool = False):
        self.name = name
        self.argv = argv
        self.logfile = logfile
        self.env = env
        self.cwd = cwd
        # a pipe the recorder holds open, never writes, for a server that stops at the
        # end of its input (an Erlang VM with its shell)
        self.hold_stdin = hold_stdin
        self.proc: subprocess.Popen | None = None
        self.paused = False
        self.starts = 0

    def start(self) -> None:
        """Start (or restart) the process; its output is appended to the log file."""
        with open(self.logfile, "ab") as out:
            out.write(f"--- start {self.starts + 1}: {' '.join(self.argv)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.PIPE if self.hold_stdin
                                         else subprocess.DEVNULL, env=self.env,
                                         cwd=self.cwd, preexec_fn=die_with_parent)
        self.starts += 1
        self.paused = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def exited(self) -> str | None:
        """Why the process is gone (exit code), None while it runs."""
        if self.proc is None or self.proc.poll() is None:
            return None
        return f"{self.name} exited with {self.proc.returncode} (log {self.logfile})"

    def kill(self) -> None:
        """SIGKILL, and wait for the process to be gone."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        self.paused = False

    def pause(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.alive() and self.paused:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self, grace: float = 0.0) -> None:
        """End the process at the end of a run: SIGTERM and ``grace`` seconds, then
        SIGKILL; a paused process is continued first."""
        if not self.alive():
            if self.proc is not None:
                self.proc.wait()
            return
        assert self.proc is not None
        if self.paused:
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False
        if grace > 0:
            self.proc.send_signal(signal.SIGTERM)
            end = time.monotonic() + grace
            while time.monotonic() < end and self.proc.poll() is None:
                time.sleep(0.05)
        self.kill()
