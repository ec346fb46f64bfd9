"""The ``qos`` protocol (003, Bar-Joseph, Keidar, Anker and Lynch) as the simulator, the
fuzzer and the command line see it: options, process factory, timed network, figures.

Options are the paper's constants (slot length Delta, delay bound delta, clock skew eps,
the FEC's I and L) and the adversary's loss probabilities. Its capabilities: the timed
network (``timing``), and the membership events crash, join, leave and recover, which
the drivers give its processes (``Member`` of ``model/process.py``; the schedule is the
simulator's, ``--join P@TIME`` and so on, in real seconds); no partitions (003 assumes
none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..net.timed import REAL_TIME, Timing
from ..process import Option, Protocol
from .fec import packets_per_slot, reserved_max
from .process import VARIANTS, Data, Join, QosParams, QosProcess
from .reserve import reservation_of
from .wire import replay

__all__ = ["PROFILE", "params", "protocol", "summary"]

#: 003 Definition 2.1 (total order, pairwise; integrity) and global order (the key
#: (slot, index, position) is one global sequence): checker/profiles/model-qos.toml.
#: Liveness is the paper's own, under joins and leaves (the checker's member-liveness at
#: the end of a drained run), not the checker's static one.
PROFILE = "model-qos"


def params(opts: Mapping[str, Any]) -> QosParams:
    return QosParams(slot=opts["slot"], max_delay=opts["max_delay"],
                     epsilon=opts["epsilon"], fec_i=opts["fec_i"], fec_l=opts["fec_l"],
                     literal_join=opts.get("variant") == "literal-join",
                     early_join_ok=opts.get("variant") == "early-join-ok",
                     reserve=reservation_of(opts.get("reserve"), "--reserve"),
                     window=opts.get("window", 10),
                     early_rn=opts.get("variant") == "early-rn",
                     receptions=bool(opts.get("receptions")),
                     unshaped=opts.get("variant") == "unshaped")


#: the events of model/events.py it honours, through its processes (Members: 003 has no
#: agreed membership, and assumes no partitions; renegotiate: 003's RN(r))
EVENTS = frozenset({"crash", "recover", "join", "leave", "renegotiate"})


def make(names: Sequence[str], opts: Mapping[str, Any], rate: float) -> list[QosProcess]:
    p = params(opts)
    return [QosProcess(i, names, p) for i in range(len(names))]


def packet_fields(packet: Any) -> dict:
    """A ``packet`` record's fields: the slot, and what the packet is."""
    if isinstance(packet, Data):
        pk = packet.packet
        return {"x_slot": pk.slot, "x_block": pk.block, "x_index": pk.index,
                "x_size": pk.size, "x_last": pk.last}
    if isinstance(packet, Join):
        return {"x_slot": packet.slot, "x_join": True}
    return {}


def timing(opts: Mapping[str, Any]) -> Timing:
    for name in ("loss", "crash_loss"):
        if not 0 <= opts[name] <= 1:
            raise ValueError(f"qos: --{name.replace('_', '-')} must be in [0, 1], got "
                             f"{opts[name]}")
    return Timing(max_delay=opts["max_delay"], epsilon=opts["epsilon"], slot=opts["slot"],
                  fec_i=opts["fec_i"], fec_l=opts["fec_l"], loss=opts["loss"],
                  crash_loss=opts["crash_loss"],
                  packet_records=bool(opts.get("packets")), packet_fields=packet_fields)


def summary(procs: Sequence[QosProcess], records: Sequence[Mapping], stats: dict) -> dict:
    """max_real_latency (send to delivery, real seconds), the bounds, timeouts, the
    busiest slot of a sender (originals, network messages) against the reservation."""
    p = procs[0].p
    sent_real: dict[str, float] = {}
    worst = 0.0
    for r in records:
        if r["kind"] == "send":
            sent_real[r["msg"]] = r[REAL_TIME]
        elif r["kind"] == "deliver":
            worst = max(worst, r[REAL_TIME] - sent_real[r["msg"]])
    most = max((c[0] for q in procs for c in q.per_slot.values()), default=0)
    packets = max((c[1] for q in procs for c in q.per_slot.values()), default=0)
    stats.update({
        "max_real_latency": worst,
        "bound": p.bound(False),
        "bound_failures": p.bound(True),
        "timeouts": sum(len(q.timeouts) for q in procs),
        "max_originals_per_slot": most,
        "max_packets_per_slot": packets,
        "packets_bound": packets_per_slot(most, p.fec_i, p.fec_l),
        "reserved_max": float(reserved_max(most, p.fec_i, p.fec_l)),
        "held": sum(q.held_total for q in procs),
    })
    stats.update(declared_peak(procs, records))
    return stats


def declared_peak(procs: Sequence[QosProcess], records: Sequence[Mapping]) -> dict:
    """The slot whose network messages came closest to the max' its sender declared for
    it (``negotiate`` records): {} when nobody declared a reservation."""
    steps: dict[str, list[tuple[int, float]]] = {}
    for r in records:
        if r["kind"] == "negotiate":
            steps.setdefault(r["process"], []).append((r["x_slot"], r["x_rate_max"]))
    best: tuple[float, int, float] | None = None
    for q in procs:
        mine = sorted(steps.get(q.name, ()))
        for s, (_, packets) in q.per_slot.items():
            declared = [m for start, m in mine if start <= s]
            if declared and (best is None or packets / declared[-1] > best[0]):
                best = (packets / declared[-1], packets, declared[-1])
    if best is None:
        return {}
    return {"declared_peak_packets": best[1], "declared_peak_max": best[2]}


def describe(stats: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    ms = 1000.0
    return [f"sent {stats['sends']} messages, {stats['deliveries']} deliveries, "
            f"{stats['timeouts']} timeouts",
            f"max latency {stats['max_real_latency'] * ms:.3f} ms real (bound "
            f"{stats['bound'] * ms:.3f} without failures, {stats['bound_failures'] * ms:.3f}"
            f" with; 003 Figures 3-4); mean {stats['mean_latency'] * ms:.3f} ms",
            f"busiest slot: {stats['max_originals_per_slot']} messages sent as "
            f"{stats['max_packets_per_slot']} network messages"
            + (f"; closest to its declared max': {stats['declared_peak_packets']} <= "
               f"{stats['declared_peak_max']:.2f}, {stats['held']} messages held over "
               "their reservation" if "declared_peak_max" in stats else
               " (no reservation declared: --reserve AVG/MAX)")]


def _nonneg(text: str) -> float:
    v = float(text)
    if not (v >= 0 and math.isfinite(v)):
        raise ValueError(f"expected a finite number >= 0, got {text!r}")
    return v


def protocol() -> Protocol:
    return Protocol(events=EVENTS,
        name="qos", title="QoS-preserving totally ordered multicast (Bar-Joseph, Keidar, "
        "Anker, Lynch; 003 section 3): slots, FEC, constant latency bounds",
        make=make,
        options=(
            Option("slot", _nonneg, 0.1, "slot length Delta, seconds (qos)"),
            Option("max_delay", _nonneg, 0.05, "delay bound delta, seconds: delays are "
                   "never drawn above it (qos)"),
            Option("epsilon", _nonneg, 0.01, "clock skew bound eps: clocks within eps/2 "
                   "of real time (qos)"),
            Option("fec_i", int, 5, "FEC loss interval I (qos)"),
            Option("fec_l", int, 2, "FEC burst bound L: at most L lost of any I "
                   "consecutive packets of a link (qos)"),
            Option("loss", float, 0.1, "probability that the burst-loss adversary loses "
                   "a packet its window allows (qos)"),
            Option("crash_loss", float, 0.5, "probability that each in-flight packet of "
                   "a crashing process is lost (past the burst bound; qos)"),
            Option("reserve", str, None, "the reservation AVG/MAX every process asks for "
                   "at join(r) (and holds from time 0): at most MAX messages a slot and AVG "
                   "in any --window slots; the sender holds excess to later slots and logs "
                   "'negotiate' records (003 section 2.1; qos)"),
            Option("window", int, 10, "K, the slots of a reservation's AVG (qos)"),
            Option("receptions", bool, False, "log a 'recv' record per network message "
                   "received from another process, which 'tomkit conform' replays (qos)"),
            Option("packets", bool, False, "write a 'packet' record per network message "
                   "(qos)"),
            Option("variant", str, None, "a broken variant: " + "; ".join(
                f"{k}: {v}" for k, v in VARIANTS.items()), choices=tuple(VARIANTS)),
        ),
        fifo=True, lossy=False, crashes=True, profile=PROFILE, live=False,
        summary=summary, describe=describe, variants=VARIANTS, timing=timing,
        replay=replay)
