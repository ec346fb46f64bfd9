"""A real signal raised inside a call: for the tests of what a command or a writer does
when Ctrl-C or SIGTERM comes in the middle of its work."""

from __future__ import annotations

import signal


def signal_at_call(monkeypatch, owner, name: str, sig: int = signal.SIGTERM,
                   at: int = 1) -> list[int]:
    """``sig`` raised in this process in the ``at``-th call of ``owner.name``, before its
    work; the calls made, one item each."""
    real = getattr(owner, name)
    calls: list[int] = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == at:
            signal.raise_signal(sig)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return calls
