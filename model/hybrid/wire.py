"""What the hybrid protocol's processes exchange: process descriptors, tickets and the
protocol messages of 001 (Rodrigues, Fonseca, Verissimo) section 5.2 and Figure 4, and
their encoding as plain JSON data for trace records (what ``tomkit conform`` reads back).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tomkit.model.hybrid.vsync import Flush, Join, NewView, State, VsMsg

__all__ = ["At", "Data", "Descriptor", "GoingToActive", "GoingToPassive", "Packet", "Pong",
           "Reassign", "Ticket", "decode", "encode"]

ACTIVE, PASSIVE = "active", "passive"


class Descriptor(NamedTuple):
    """D_j = (p_j, r_j, rn_j) (section 5): process, role, role number (0 at start, one
    more at every change of role)."""

    p: int
    role: str
    rn: int


class Ticket(NamedTuple):
    """A ticket (p_i, t_i, (p_j, c_j)) (section 4.1): issued by ``issuer`` with ticket
    number ``number`` for message (``sender``, ``count``). Tickets are ordered "by
    increasing order of their ticket numbers, and tickets with the same ticket number
    ... according to the total order of ticket issuers": :meth:`key`.

    >>> a5, b5, a6 = Ticket(0, 5, 2, 1), Ticket(1, 5, 2, 2), Ticket(0, 6, 2, 3)
    >>> [t.key for t in sorted([a6, b5, a5], key=lambda t: t.key)]
    [(5, 0), (5, 1), (6, 0)]
    """

    issuer: int
    number: int
    sender: int
    count: int

    @property
    def key(self) -> tuple[int, int]:
        return (self.number, self.issuer)

    @property
    def msg(self) -> tuple[int, int]:
        return (self.sender, self.count)


class Data(NamedTuple):
    """<data, p, c, S, user data> (section 5.2): ``D`` is the sequencer assigned to the
    message; ``mid`` the application's message; ``probe`` asks every receiver for an
    immediate point-to-point reply (section 6.1's round-trip delay measurement);
    ``clock`` the sender's clock when its application sent it (section 6.1: "each
    process timestamps every message", from which receivers estimate its rate; the
    application's time, not the wire's, so that messages held back during a switch do
    not look like a burst)."""

    p: int
    c: int
    D: Descriptor
    mid: str
    probe: bool = False
    clock: float = 0.0


class GoingToActive(NamedTuple):
    """<goingToActive, p, c, S> (section 5.3.3), ordered as data, never delivered."""

    p: int
    c: int
    D: Descriptor


class GoingToPassive(NamedTuple):
    """<goingToPassive, p, c, S> (section 5.3.2), ordered as data, never delivered."""

    p: int
    c: int
    D: Descriptor


class Reassign(NamedTuple):
    """<reassign, p, ]lo, hi], S_new> (section 5.2): never ordered nor delivered; moves
    p's messages lo < c <= hi to the sequencer ``D``."""

    p: int
    lo: int
    hi: int
    D: Descriptor


class Packet(NamedTuple):
    """What one vs-multicast carries: [tickets]<M> (Figure 4). ``tn``: the sender's
    ticket counter when it is active (a promise: it issues no ticket numbered <= tn
    from now on; None from a passive process); ``clock``: the sender's clock at the
    send (section 6.1: "each process timestamps every message"); ``body`` None: a null
    message that only carries tickets and the promise (decision A4)."""

    tickets: tuple[Ticket, ...]
    tn: int | None
    clock: float
    body: Data | GoingToActive | GoingToPassive | Reassign | None


class Pong(NamedTuple):
    """The point-to-point null reply to a probe (section 6.1), from ``frm`` to the
    probe's sender, with the probe's send clock."""

    frm: int
    clock: float


class At(NamedTuple):
    """A replayed input with the time the implementation logged it (the replayer passes
    positions, not times; ticket numbers follow the clock)."""

    time: float
    input: Any


_TYPES = {c.__name__: c for c in (Descriptor, Ticket, Data, GoingToActive, GoingToPassive,
                                  Reassign, Packet, Pong, VsMsg, Flush, NewView, Join, State)}


def encode(x: Any) -> Any:
    """A named tuple as ``{"_": type, field: ...}``, tuples as lists, recursively.

    >>> encode(Ticket(0, 5, 2, 1))
    {'_': 'Ticket', 'issuer': 0, 'number': 5, 'sender': 2, 'count': 1}
    >>> decode(encode(Packet((Ticket(0, 5, 2, 1),), 5, 0.5, None))).tickets[0].key
    (5, 0)
    """
    if isinstance(x, tuple):
        if hasattr(x, "_fields"):
            out = {"_": type(x).__name__}
            for f, v in zip(x._fields, x):
                out[f] = encode(v)
            return out
        return [encode(v) for v in x]
    return x


def decode(x: Any) -> Any:
    """The inverse of :func:`encode`; ValueError on an unknown type."""
    if isinstance(x, dict):
        name = x.get("_")
        cls = _TYPES.get(name)  # type: ignore[arg-type]
        if cls is None:
            raise ValueError(f"unknown packet type {name!r}")
        try:
            return cls(**{k: decode(v) for k, v in x.items() if k != "_"})
        except TypeError as e:
            raise ValueError(f"bad {name}: {e}") from None
    if isinstance(x, list):
        return tuple(decode(v) for v in x)
    return x
