"""Ctrl-C (and SIGTERM) that waits for a write to finish.

A writer stopped half way through a write leaves a line cut in two, a gzip stream whose
compressor state was lost, or a Parquet writer between its row groups: a file the readers
refuse. Inside :func:`uninterrupted`, SIGINT is remembered and raised as
:class:`KeyboardInterrupt` once the block is done, so a writer stopped by Ctrl-C stops
between writes, with every record written whole, and can close its file as a valid one
(``traces/writer.py``). Only the main thread receives signals, and only Python's own
handler is deferred: a program with a handler of its own keeps it.

SIGTERM (``kill``, ``timeout``, a service manager) ends a Python program at once, in
the middle of a write. A command that calls :func:`terminate_as_interrupt` takes it as
Ctrl-C instead: :class:`Terminated`, a KeyboardInterrupt, is raised, deferred inside
:func:`uninterrupted` as SIGINT is, so every ``except KeyboardInterrupt`` that keeps a
file whole keeps it under SIGTERM too; the command then exits with 143 (128 + 15), as a
program ended by SIGTERM, not 130.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Terminated", "add_note", "exit_code", "stopped", "terminate_as_interrupt",
           "uninterrupted"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C: what a writer does on Ctrl-C it does on this."""

    signum = signal.SIGTERM


def exit_code(exc: KeyboardInterrupt) -> int:
    """The exit code of a command stopped by ``exc``: 143 for SIGTERM, 130 for Ctrl-C
    (128 + the signal's number, as a shell reports a program the signal ended)."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def stopped(exc: KeyboardInterrupt) -> str:
    """How a command stopped by ``exc`` says it stopped."""
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


class _TermHandler:
    """Raises Terminated in the process that installed it. A process forked from it
    (a worker of a pool) dies of SIGTERM as it would have without the handler: its
    parent decides what to keep."""

    def __init__(self) -> None:
        self.pid = os.getpid()

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self.pid:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated


def terminate_as_interrupt() -> None:
    """From now on, SIGTERM raises :class:`Terminated` in the main thread (a command's
    process: a library leaves the signal to its program)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _TermHandler())


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Run the block to its end under Ctrl-C (and SIGTERM, taken as Ctrl-C); a signal
    received meanwhile is raised after it, as KeyboardInterrupt or Terminated (nested
    blocks: the outermost one defers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    deferred = [s for s, own in ((signal.SIGINT, signal.default_int_handler),
                                 (signal.SIGTERM, None))
                if (own is not None and signal.getsignal(s) is own)
                or (own is None and isinstance(signal.getsignal(s), _TermHandler))]
    if not deferred:
        yield
        return
    received: list[int] = []
    saved = {s: signal.getsignal(s) for s in deferred}
    for s in deferred:
        signal.signal(s, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
        if received:
            raise Terminated if received[0] == signal.SIGTERM else KeyboardInterrupt


def add_note(exc: BaseException, text: str) -> None:
    """``exc.add_note(text)``, also on Python 3.10 (whose tracebacks show no notes, but
    the command prints them): what a writer stopped by Ctrl-C did with its file."""
    exc.__notes__ = [*getattr(exc, "__notes__", ()), text]
