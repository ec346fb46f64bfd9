"""A qos process's receptions as trace records, and back: what ``tomkit conform --protocol
qos`` replays.

With the option ``receptions`` each process logs one ``recv`` record per network message
it receives from another process (its own come back to it at once, and the replayer
feeds them as the simulator does). A network message is not an application message, so
its ``msg`` is the network message's own id, unique in the trace:

* an FEC packet of sender k (003 section 2.2): ``msg`` = ``k/slot/block/index`` and
  ``x_from`` (k's name), ``x_slot``, ``x_block``, ``x_index``, ``x_size``, ``x_last``,
  ``x_payload``: the application messages it carries (an original: its one message; a
  redundant packet: the block's originals, the code being symbolic, fec.py), the
  slot's dummy as ``""`` (message ids are never empty), and ``x_leave``: the position in
  ``x_payload`` of the sender's leave, when the packet carries it;
* a join copy (003 section 3.3, one of 1 + L): ``msg`` = ``k/join/slot/copy``, ``x_from``,
  ``x_slot`` (the join slot), ``x_copy``, ``x_join: true``.

No property reads ``recv`` records (the checker's properties judge deliveries), so these
change no verdict; a recording of another implementation of 003 logs the same fields at
its FEC layer's input. A sender's block numbers restart at its rejoin while its slots
go on, so (slot, block, index) names one packet of a sender.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..process import MemberEvent, Receive, Renegotiate, Replayed, ReplayError, Send, Timer
from .fec import DUMMY, Packet
from .reserve import Reservation, reservation_of

__all__ = ["Data", "Join", "Leave", "packet_of", "reception", "replay"]


class Join(NamedTuple):
    """join(p, s_j) (003 section 3.3), one of the 1 + L copies."""

    sender: int
    slot: int
    copy: int


class Data(NamedTuple):
    """A network message of the FEC layer (``fec.Packet``) from process ``sender``."""

    sender: int
    packet: Packet


class Leave(NamedTuple):
    """The leave message a leaver FEC-sends in its last slot (003 section 3.3)."""

    sender: int


def _item(x: object, leave: list[int], k: int) -> str:
    if x is DUMMY:
        return ""
    if isinstance(x, Leave):
        leave.append(k)
        return ""
    return str(x)


def reception(packet: Any, names: Sequence[str]) -> tuple[str, dict]:
    """A received network message as a ``recv`` record's ``msg`` and fields."""
    if isinstance(packet, Join):
        k = names[packet.sender]
        return (f"{k}/join/{packet.slot}/{packet.copy}",
                {"x_from": k, "x_slot": packet.slot, "x_copy": packet.copy, "x_join": True})
    if not isinstance(packet, Data):
        raise TypeError(f"not a qos packet: {packet!r}")
    pk, k = packet.packet, names[packet.sender]
    # a redundant packet carries the block's originals as a plain tuple (Leave is a tuple too)
    items = pk.payload if type(pk.payload) is tuple else (pk.payload,)
    leave: list[int] = []
    payload = [_item(x, leave, i) for i, x in enumerate(items)]
    fields = {"x_from": k, "x_slot": pk.slot, "x_block": pk.block, "x_index": pk.index,
              "x_size": pk.size, "x_last": pk.last, "x_payload": payload}
    if leave:
        fields["x_leave"] = leave[0]
    return f"{k}/{pk.slot}/{pk.block}/{pk.index}", fields


def _need(r: Mapping, where: str, name: str, kind: type) -> Any:
    v = r.get(name)
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise ReplayError(f"{where}: field {name}: a qos reception needs it "
                          f"({kind.__name__}), got {v!r}")
    return v


def packet_of(r: Mapping, at: Mapping[str, int], fec_l: int, where: str) -> Data | Join:
    """The network message a ``recv`` record logs (module docstring), for the FEC's L;
    ReplayError naming ``where`` and the field when it cannot be rebuilt."""
    k = r.get("x_from")
    if k not in at:
        raise ReplayError(f"{where}: field x_from: {k!r} is not a process of the trace")
    sender = at[k]
    if r.get("x_join") is True:
        return Join(sender, _need(r, where, "x_slot", int), _need(r, where, "x_copy", int))
    payload = _need(r, where, "x_payload", list)
    leave = r.get("x_leave")
    items: list[object] = []
    for i, x in enumerate(payload):
        if not isinstance(x, str):
            raise ReplayError(f"{where}: field x_payload: message ids are strings, got {x!r}")
        items.append(Leave(sender) if i == leave else (x if x else DUMMY))
    index, size = _need(r, where, "x_index", int), _need(r, where, "x_size", int)
    # originals (indices 1 .. size - L) carry one message, redundant packets the tuple
    original = index <= size - fec_l
    if original and len(items) != 1:
        raise ReplayError(f"{where}: field x_payload: original {index} of {size} (L = "
                          f"{fec_l}) carries one message, got {len(items)}")
    pk = Packet(_need(r, where, "x_slot", int), _need(r, where, "x_block", int), index, size,
                _need(r, where, "x_last", bool), items[0] if original else tuple(items))
    return Data(sender, pk)



def replay(records: Sequence[Mapping], names: Sequence[str],
           options: Mapping[str, Any]) -> dict[str, list[Replayed]]:
    """Each process's inputs from a recorded qos trace (``tomkit conform``), each at the
    local time its record logged: its application sends, its receptions (``recv``, module
    docstring), its join (at the request's local time ``x_requested``; after its crash,
    its recover), leave, crash, and renegotiations (``negotiate`` with ``x_rn``). A
    process whose first membership record is a join was outside the group from time 0;
    the others wake at time 0 of real time (local: ``time - real_time``, else their first
    record's time) and start their slots. The reservation at join(r) is the option
    ``reserve``: the trace's own must match it (ReplayError naming the record)."""
    at = {p: i for i, p in enumerate(names)}
    fec_l = options["fec_l"]
    want = reservation_of(options.get("reserve"), "--reserve")
    out: dict[str, list[Replayed]] = {p: [] for p in names}
    pos = dict.fromkeys(names, 0)
    first: dict[str, str] = {}
    crashed = dict.fromkeys(names, False)
    start: dict[str, float] = {}
    receptions = False
    for r in records:
        p = r["process"]
        i = pos[p]
        pos[p] = i + 1
        where = f"{p}: record {i} ({r['kind']})"
        t = r.get("time")
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            raise ReplayError(f"{where}: field time: a qos trace logs each record's local "
                              "clock")
        if p not in start:
            rt = r.get("real_time")
            start[p] = t - rt if isinstance(rt, (int, float)) else t
        kind = r["kind"]
        if kind == "send":
            out[p].append(Replayed(i, Send(r["msg"]), True, t))
        elif kind == "recv":
            receptions = True
            out[p].append(Replayed(i, Receive(packet_of(r, at, fec_l, where)), True, t))
        elif kind == "join":
            req = r.get("x_requested")
            if isinstance(req, bool) or not isinstance(req, (int, float)):
                raise ReplayError(f"{where}: field x_requested: the join request's local "
                                  "time is needed to replay it (the join record is its "
                                  "join_OK)")
            first.setdefault(p, "join")
            out[p].append(Replayed(i, MemberEvent("recover" if crashed[p] else "join"),
                                   True, req))
            crashed[p] = False
        elif kind in ("leave", "crash"):
            first.setdefault(p, kind)
            crashed[p] = crashed[p] or kind == "crash"
            out[p].append(Replayed(i, MemberEvent(kind), False, t))
        elif kind == "negotiate":
            r_ = Reservation(r.get("x_avg"), r.get("x_max"))  # type: ignore[arg-type]
            try:
                r_.check()
            except ValueError:
                raise ReplayError(f"{where}: fields x_avg, x_max: the application's "
                                  f"reservation, two integers >= 0, got {tuple(r_)!r}"
                                  ) from None
            if r.get("x_rn") is True:
                out[p].append(Replayed(i, Renegotiate(tuple(r_)), True, t))  # type: ignore[arg-type]
            elif r_ != want:
                raise ReplayError(f"{where}: the trace declares the reservation "
                                  f"{r_.avg}/{r_.max} at join: replay with --reserve "
                                  f"{r_.avg}/{r_.max}" + (f" (given {want.avg}/{want.max})"
                                                          if want else ""))
    if not receptions:
        raise ReplayError("the trace logs no recv records: replaying qos needs each "
                          "process's receptions (simulate with --receptions; "
                          "model/qos/wire.py)")
    for p in names:
        if p not in start:
            continue
        if first.get(p) == "join":
            out[p].insert(0, Replayed(0, MemberEvent("outside"), False, -math.inf))
        else:
            out[p].insert(0, Replayed(0, Timer(), False, start[p]))
    return out
