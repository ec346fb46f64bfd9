"""What a prover is, as ``tomkit prove`` and the registry (``provers.py``) see it.

A prover decides one protocol family's safety with Z3 (delivery rules, timestamp
protocols, the QoS bound). It declares what it proves (protocol names), the settings it
takes, the way protocols declare theirs (``model/process.py``'s :class:`Option`: a flag
``--name`` each, ``--no-name`` for a bool that defaults to True, repeatable when the
default is a tuple), and a ``run`` that prints its lines and returns the exit code,
handing each outcome (an object with ``to_dict()``, whose ``verdict`` is proved,
counterexample or unknown) to ``report`` for ``tomkit prove --format json``. The command
line builds its flags from these declarations and refuses a flag the chosen
prover does not declare, naming both; it has no branch on a protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tomkit.model.process import Option

__all__ = ["ProveUsageError", "Prover", "n_range"]


class ProveUsageError(ValueError):
    """Settings a prover cannot use (``tomkit prove``: exit 2 with the message)."""


def n_range(text: str) -> tuple[int, int]:
    """``N`` or ``A-B`` (1 <= A <= B): the processes a prover runs for, one line each."""
    lo, sep, hi = text.partition("-")
    try:
        a = int(lo)
        b = int(hi) if sep else a
    except ValueError:
        raise ValueError(f"expected N or A-B, got {text!r}") from None
    if not 1 <= a <= b:
        raise ValueError(f"expected 1 <= A <= B, got {text!r}")
    return a, b


@dataclass(frozen=True)
class Prover:
    """One prover: ``run(protocol, rule, options, say, report)`` with the options resolved
    (every declared one present, defaults filled in), the protocol chosen (None: a RULE
    alone) and the RULE (None unless the prover ``takes_rule``); ``say`` prints one line
    of output, ``report`` takes each outcome (``to_dict()``: ``--format json``).
    Returns 0 every query proved, 1 a counterexample, 3 unknown; raises
    :class:`ProveUsageError` for settings that do not fit."""

    name: str
    #: one line: what it proves and where it comes from (paper and section)
    title: str
    #: the protocols it proves (``--protocol`` values)
    protocols: tuple[str, ...]
    options: tuple[Option, ...]
    run: Callable[[str | None, str | None, Mapping[str, Any], Callable[[str], None],
                   Callable[[Any], None]], int]
    #: it proves a delivery rule named by the positional RULE (a protocol of
    #: ``protocols`` is then the rule of that name)
    takes_rule: bool = False
    #: the largest n measured to finish, and where the figures are: Z3's time grows
    #: steeply with n, so ``tomkit prove`` refuses a larger ``--n`` unless told
    #: ``--no-size-limit`` (None: no limit)
    largest_n: tuple[int, str] | None = None

    def too_large(self, n: int | tuple[int, int] | None, given: str, override: str,
                  timeout: str) -> str | None:
        """Why ``n`` (one, or a range A-B) is refused, beyond the largest n this prover
        was measured to finish, or None. ``given`` names the setting (``--n``, ``n =``),
        ``override`` how the caller lifts the limit (``tomkit prove``:
        ``--no-size-limit``; :func:`tomkit.prove`: ``no_size_limit=True``) and ``timeout`` how
        it bounds each query, so that the command and the API say the same."""
        if n is None or self.largest_n is None:
            return None
        lo, hi = (n, n) if isinstance(n, int) else n
        if hi <= self.largest_n[0]:
            return None
        most, where = self.largest_n
        shown = str(lo) if lo == hi else f"{lo}-{hi}"
        return (f"{given} {shown}: the {self.name} prover was measured to finish up to "
                f"n = {most} ({where}); larger n may run for hours (Z3's time grows "
                f"steeply with n). Give {override} to run it anyway (and {timeout} to "
                "bound each query)")

    def resolve(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The declared options with defaults filled in; ProveUsageError naming the flags
        given that this prover does not declare."""
        mine = {o.name for o in self.options}
        other = sorted(n for n in given if n not in mine)
        if other:
            flags = ", ".join("--" + n.replace("_", "-") for n in other)
            raise ProveUsageError(f"{flags} {'does' if len(other) == 1 else 'do'} not go "
                                  f"with the {self.name} prover ({self.title})")
        out = {}
        for o in self.options:
            v = given.get(o.name, o.default)
            values = v if isinstance(v, (tuple, list)) else (v,)
            bad = [x for x in values if x is not None and o.choices is not None
                   and x not in o.choices]
            if bad:
                raise ProveUsageError(f"{o.flag} must be one of "
                                      f"{', '.join(map(str, o.choices))}, not {bad[0]!r}")
            out[o.name] = v
        return out


def worst(codes: Sequence[int]) -> int:
    """The exit code of several lines: a counterexample (1) over unknown (3) over
    proved (0)."""
    return 1 if 1 in codes else 3 if 3 in codes else 0
