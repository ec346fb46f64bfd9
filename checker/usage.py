"""The errors of a run's settings, shared by ``tomkit check``, ``tomkit.check()`` and the
property registry: one type for every bad setting (UsageError), and the one for a name
that does not exist, with the closest spelling (UnknownName). Light on purpose: the
command imports it before anything else."""

from __future__ import annotations

import difflib

__all__ = ["UnknownName", "UsageError", "unknown_name"]


class UsageError(ValueError):
    """Settings that do not fit together, or a value out of range (``tomkit check``: exit
    code 2 with the message); ``tomkit.check()`` raises it for every such setting."""


class UnknownName(UsageError, KeyError):
    """A property, scope or guarantee profile named that does not exist: the message names
    the known ones and the closest spelling. A UsageError like every other bad setting of
    ``tomkit.check()``; a KeyError too, as lookups by name raised before."""

    def __str__(self) -> str:  # KeyError's would quote the message as a key
        return str(self.args[0]) if self.args else ""


def unknown_name(what: str, name: str, known: list[str], shown: str | None = None
                 ) -> UnknownName:
    """The error for ``name`` among ``known``, with the closest spelling (as the CLI's)."""
    near = difflib.get_close_matches(name, known, n=1)
    return UnknownName(f"unknown {what} {shown or repr(name)}; known: {', '.join(known)}"
                       + (f"; did you mean {near[0]!r}?" if near else ""))
