"""Ctrl-C that waits for a write to finish.

A writer stopped half way through a write leaves a line cut in two, a gzip stream whose
compressor state was lost, or a Parquet writer between its row groups: a file the readers
refuse. Inside :func:`uninterrupted`, SIGINT is remembered and raised as
:class:`KeyboardInterrupt` once the block is done, so a writer stopped by Ctrl-C stops
between writes, with every record written whole, and can close its file as a valid one
(``traces/writer.py``). Only the main thread receives signals, and only Python's own
handler is deferred: a program with a handler of its own keeps it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["add_note", "uninterrupted"]


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Run the block to its end under Ctrl-C; a SIGINT received meanwhile is raised as
    KeyboardInterrupt after it (nested blocks: the outermost one defers)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if received:
            raise KeyboardInterrupt


def add_note(exc: BaseException, text: str) -> None:
    """``exc.add_note(text)``, also on Python 3.10 (whose tracebacks show no notes, but
    the command prints them): what a writer stopped by Ctrl-C did with its file."""
    exc.__notes__ = [*getattr(exc, "__notes__", ()), text]
