"""The fixed-sequencer protocol as the simulator, the fuzzer, the replayer and the command
line see it (``model/process.py``'s :class:`~tomkit.model.process.Protocol`).

Options: ``variant`` (the broken ``no-flush``, ``model/sequencer/process.py``) and
``control_records`` (log every protocol packet and Crash notice as a ``recv`` record,
what ``tomkit conform`` replays). The network it assumes: reliable FIFO links (the
sequencer numbers a sender's messages in sending order only if they reach it in that
order), crashes handled, no losses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..process import Crash, Option, Protocol, Receive, Replayed, ReplayError
from ..process import Send as SendInput
from .process import VARIANTS, Data, Order, Report, SequencerProcess, Takeover, parse_orders

__all__ = ["PROFILE", "make", "protocol", "replay"]

#: what every run must satisfy, crashes of the sequencer included: the guarantee profile
#: checker/profiles/model-sequencer.toml, the one list of the properties (docs/sequencer.md
#: argues each; the checker's default scope is uniform: the drivers' crashes lose no
#: packet, so even a crashed process delivers a prefix of the survivors' order)
PROFILE = "model-sequencer"

OPTIONS = (
    Option("variant", str, None, "a broken variant, for checker and fuzzer demos: "
           + "; ".join(f"{k}: {v}" for k, v in VARIANTS.items()), choices=tuple(VARIANTS)),
    Option("control_records", bool, True, "log the receptions of orders, flush reports, "
           "takeovers and Crash notices as recv records (what 'tomkit conform' replays)"),
)


def make(names: Sequence[str], opts: Mapping[str, Any], rate: float
         ) -> list[SequencerProcess]:
    return [SequencerProcess(i, names, variant=opts.get("variant"),
                             control_records=opts.get("control_records", True))
            for i in range(len(names))]


def summary(procs: Sequence[SequencerProcess], records: Sequence[Mapping],
            stats: dict) -> dict:
    """orders (numbers the sequencers broadcast), reports (flush reports sent),
    takeovers (view changes completed)."""
    stats.update({
        "orders": sum(p.orders_sent for p in procs),
        "reports": sum(p.reports_sent for p in procs),
        "takeovers": sum(p.takeovers for p in procs),
    })
    return stats


def describe(stats: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    lat = stats["mean_latency"]
    return [f"sent {stats['sends']} messages ({stats['orders']} orders, "
            f"{stats['reports']} flush reports, {stats['takeovers']} takeovers), "
            f"{stats['deliveries']} deliveries, {stats['undelivered']} undelivered",
            "mean latency " + ("n/a" if math.isnan(lat) else f"{lat * 1000:.3f} ms")]


def replay(records: Sequence[Mapping], names: Sequence[str],
           opts: Mapping[str, Any]) -> dict[str, list[Replayed]]:
    """Each process's inputs from a recorded trace (``tomkit conform``): its sends, the
    messages it received, and the orders, flush reports, takeovers and Crash notices it
    logged (``model/sequencer/process.py``'s docstring; the simulator logs them by
    default). A message's sender is the process of its ``send`` record."""
    at = {p: i for i, p in enumerate(names)}
    sender: dict[str, int] = {}
    for r in records:
        if r["kind"] == "send":
            sender[r["msg"]] = at[r["process"]]
    if sender and not any(r["kind"] == "recv" and (r.get("x_packet") or r.get("x_crash"))
                          for r in records):
        raise ReplayError("the trace logs no receptions of orders (x_packet): the sequencer "
                          "protocol needs them to replay (simulate with control records)")

    def who(r: Mapping, key: str) -> int:
        v = r.get(key)
        if v not in at:
            raise ReplayError(f"{r['process']}: {key} {v!r} of {r.get('msg')} names no "
                              "process of the trace")
        return at[v]

    out: dict[str, list[Replayed]] = {p: [] for p in names}
    pos = dict.fromkeys(names, 0)
    for r in records:
        p = r["process"]
        i = pos[p]
        pos[p] = i + 1
        kind = r["kind"]
        try:
            if kind == "send":
                out[p].append(Replayed(i, SendInput(r["msg"])))
            elif kind != "recv":
                continue
            elif r.get("x_crash") is not None:
                out[p].append(Replayed(i, Crash(who(r, "x_crash")), False))
            else:
                packet = r.get("x_packet")
                if packet is None:
                    mid = r["msg"]
                    if mid not in sender:
                        raise ReplayError(f"{p} receives {mid}, which no process sent")
                    inp: Any = Data(mid, sender[mid])
                elif packet == "order":
                    inp = Order(r["x_of"], int(r["x_seq"]), who(r, "x_from"))
                elif packet == "report":
                    inp = Report(who(r, "x_from"), who(r, "x_to"),
                                 parse_orders(r["x_orders"]))
                elif packet == "takeover":
                    inp = Takeover(who(r, "x_from"), parse_orders(r["x_orders"]))
                else:
                    raise ReplayError(f"unknown x_packet {packet!r}")
                out[p].append(Replayed(i, Receive(inp)))
        except (KeyError, ValueError, TypeError) as e:
            if isinstance(e, ReplayError):
                raise ReplayError(f"{p}: record {i} ({r.get('msg', kind)}): {e}") from None
            raise ReplayError(f"{p}: record {i} ({r.get('msg', kind)}): missing or bad "
                              f"field {e}") from None
    return out


def protocol() -> Protocol:
    return Protocol(
        name="sequencer", title="the fixed-sequencer total-order broadcast, BB variant, "
        "with a view change on the sequencer's crash (Défago, Schiper and Urbán 2004, "
        "section 4.1)", make=make, options=OPTIONS, fifo=True, lossy=False, crashes=True,
        profile=PROFILE, live=True, replay=replay, summary=summary, describe=describe,
        variants=VARIANTS)
