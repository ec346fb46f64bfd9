"""ACK-only messages as candidates or not: what 000 section 4.1's reading changes.

    python bench/ack_only.py [--messages 4000] [--seed 1] [--quick]

Sources: 000 (Dolev, Kramer, Malki) section 4.1 (a pending message is an agreed
message; a candidate is a pending message that follows only delivered ones; Figure 1's
causal messages are never candidates) and section 6 (Tables 2 and 3's runs: n = 8,
delta = 4, periodic and Poisson sources, 50 - 200 msgs/s in all; bench/toto_tables.py
explains the load and the LAN delays).

The ToTo family's processes send an ACK-only message when idle (model/toto/process.py). Before,
the simulator ordered those as candidates like agreed messages; now they vote while in G
and leave it once all they follow is delivered, never a candidate (model/toto/dag.py,
``DagView._retire``). Both readings run here on the same inputs (same seed: the same
application messages at the same times over the same delays), for ToTo and the three
rules of 002, and the bench prints, per row:

* (per idle time before an ACK-only message: 5 mean source periods, the default, and
  0.5, an eager acknowledger)
* ACK-only messages, and their share of all messages sent;
* mean latency and mean index of latency under each reading, and their ratio
  (new / old: below 1 is faster);
* the share of (process, message) deliveries the new reading makes earlier and later;
* whether the application messages are delivered in the same total order.

The figures are in docs/toto-ack-only.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tomkit.model.sim import SimConfig, SimResult, simulate

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from toto_tables import LAN, _compare, _delivers, _sends  # noqa: E402

__all__ = ["main", "rows"]

PROTOCOLS = ("toto", "s-toto", "g-toto", "gl-toto")
LOADS = (50, 100, 200)
SOURCES = ("periodic", "poisson")
#: the idle time before an ACK-only message, in mean source periods: 5 is the
#: simulator's default (ACK-only messages then come at the end of a run), 0.5 an eager
#: acknowledger that sends many
PERIODS = (5.0, 0.5)


def _run(protocol: str, source: str, load: int, messages: int, seed: int,
         ack_candidates: bool, periods: float) -> SimResult:
    rate = load / 8
    return simulate(SimConfig(protocol=protocol, n=8, source=source, rate=rate,
                              messages=messages, delay=LAN, seed=seed,
                              options={"delta": 4, "ack_candidates": ack_candidates,
                                       "ack_timeout": periods / rate}))


def _order(res: SimResult) -> list[str]:
    """The application messages in the order the first process delivered them."""
    first = res.records[0]["process"] if res.records else None
    return [r["msg"] for r in res.records if r["kind"] == "deliver" and r["process"] == first]


def rows(messages: int = 4000, seed: int = 1, loads: Sequence[int] = LOADS,
         sources: Sequence[str] = SOURCES, protocols: Sequence[str] = PROTOCOLS,
         periods: Sequence[float] = PERIODS) -> list[dict]:
    """One dict per (idle time, protocol, source, load)."""
    out = []
    for idle in periods:
        for protocol in protocols:
            for source in sources:
                for load in loads:
                    old = _run(protocol, source, load, messages, seed, True, idle)
                    new = _run(protocol, source, load, messages, seed, False, idle)
                    if _sends(old) != _sends(new):
                        raise RuntimeError(f"{protocol} {source} {load}: the two readings did "
                                           "not get the same application messages")
                    earlier, later = _compare(_delivers(old), _delivers(new))
                    so, sn = old.stats, new.stats
                    out.append({
                        "periods": idle, "protocol": protocol, "source": source,
                        "load": load, "seed": seed,
                        "acks_old": so["acks"], "acks_new": sn["acks"],
                        "ack_share_new": sn["acks"] / (sn["acks"] + sn["sends"]),
                        "lat_old_ms": 1000 * so["mean_latency"],
                        "lat_new_ms": 1000 * sn["mean_latency"],
                        "iol_old": so["mean_index_of_latency"],
                        "iol_new": sn["mean_index_of_latency"],
                        "earlier": earlier, "later": later,
                        "same_order": _order(old) == _order(new),
                        "undelivered": so["undelivered"] + sn["undelivered"],
                    })
    return out


def print_rows(res: list[dict]) -> None:
    print(f"{'idle':>4s} {'rule':8s} {'source':8s} {'load':>4s} {'acks old/new':>12s} "
          f"{'share':>6s} "
          f"{'lat old':>8s} {'lat new':>8s} {'ratio':>6s} {'iol old':>7s} {'iol new':>7s} "
          f"{'earlier':>7s} {'later':>6s} same-order")
    for r in res:
        print(f"{r['periods']:4.1f} {r['protocol']:8s} {r['source']:8s} {r['load']:>4d} "
              f"{r['acks_old']:>5d}/{r['acks_new']:<6d} {100 * r['ack_share_new']:5.2f}% "
              f"{r['lat_old_ms']:8.2f} {r['lat_new_ms']:8.2f} "
              f"{r['lat_new_ms'] / r['lat_old_ms']:6.3f} {r['iol_old']:7.3f} "
              f"{r['iol_new']:7.3f} {100 * r['earlier']:6.2f}% {100 * r['later']:5.2f}% "
              f"{'yes' if r['same_order'] else 'no'}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="600 messages, ToTo only")
    a = ap.parse_args(argv)
    messages = 600 if a.quick else a.messages
    print(f"seed {a.seed}, {messages} messages per run, n = 8, delta = 4 (000 Tables 2-3)")
    print_rows(rows(messages, a.seed, protocols=("toto",) if a.quick else PROTOCOLS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
