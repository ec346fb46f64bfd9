"""Sizes a command judges before it starts, so that a huge number (a typo far more often
than a wish) is refused in one line instead of running until memory or disk runs out:
the bytes a record takes at the least, and sizes said in units a person reads."""

from __future__ import annotations

__all__ = ["RECORD_BYTES", "show_bytes"]

#: bytes a record takes in memory at the least (a dict of its six fields, measured 272;
#: a simulated record with its extra fields takes about 620: docs/sim-speed.md)
RECORD_BYTES = 200


def show_bytes(b: float) -> str:
    """``b`` bytes in the largest unit below it: ``1,536 B`` is ``2 KB``."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if b < 1024 or unit == "PB":
            return f"{b:,.0f} {unit}"
        b /= 1024
    return f"{b:,.0f} PB"
