"""Every prover, by the protocols it proves: the registry ``tomkit prove`` reads (each
prover declares itself in its room, with its options: ``base.py``)."""

from __future__ import annotations

from tomkit.fuzz.prove import qos_bound
from tomkit.fuzz.prove.base import Prover
from tomkit.fuzz.prove.delivery import prover as delivery
from tomkit.fuzz.prove.timestamps import prover as timestamps

__all__ = ["PROVERS", "by_protocol", "register", "rule_prover", "unregister"]

#: every prover, in the order ``tomkit prove --help`` lists them
PROVERS: list[Prover] = [delivery.PROVER, timestamps.PROVER, qos_bound.PROVER]


def register(prover: Prover) -> Prover:
    """Add a prover (its protocols become values of ``tomkit prove --protocol``, its
    options flags); ValueError when a protocol it proves already has a prover."""
    PROVERS.append(prover)
    try:
        by_protocol()
    except ValueError:
        PROVERS.pop()
        raise
    return prover


def unregister(name: str) -> Prover:
    """Remove the prover ``name``; KeyError when there is none."""
    for i, p in enumerate(PROVERS):
        if p.name == name:
            return PROVERS.pop(i)
    raise KeyError(name)


def by_protocol() -> dict[str, Prover]:
    """Protocol name -> its prover; ValueError when two provers claim one protocol."""
    out: dict[str, Prover] = {}
    for p in PROVERS:
        for name in p.protocols:
            if name in out:
                raise ValueError(f"protocol {name} is claimed by the {out[name].name} and "
                                 f"the {p.name} provers")
            out[name] = p
    return out


def rule_prover() -> Prover:
    """The prover of a RULE given alone (the one that ``takes_rule``)."""
    (p,) = [p for p in PROVERS if p.takes_rule]
    return p
