"""Reproduce 000's Tables 2 and 3 (ToTo vs all-ack) on the simulator, plus 002's variants.

    python bench/toto_tables.py [--messages 4000] [--seed 1] [--quick]

Sources: 000 (Dolev, Kramer, Malki) section 6, Tables 2 and 3; 002 section 7.

Reading of 000's "load"
-----------------------
000 section 6 quotes loads of 50 - 200 "msgs/sec" for "8 Sun-4 machines" exchanging 4000
messages, and the all-ack latencies pin down what that means. For a periodic source with
period c per process and random phases, all-ack waits for the next message of the last of
the other n - 1 = 7 processes, about c * 7/8; for a Poisson source of rate lambda per
process, about H_7 / lambda = 2.59 / lambda (000's equation (1)). Table 2's all-ack
latency at 50 msgs/s is 135 ms and Table 3's is 385 ms: c = 160 ms and lambda = 6.25/s,
i.e. 50 msgs/s *for the whole group* (6.25 per process). A per-process reading would give
all-ack latencies of 17.5 ms and 52 ms, far from the tables. So the load here is the
*total* load and each process sends at ``load / n`` (``SimConfig.rate`` is per process).

Delay model (LAN)
-----------------
000 ran over a 10 Mbit/s Ethernet; the delay is small against the gaps between sends
(>= 40 ms per process at 200 msgs/s). Every link is 001's shifted gamma with mean 1 ms,
variance 0.05 * mean^2 and shift 0.5 ms (``Delay("gamma", 0.001)``). For the wide-DAG
topology (section 2 of the output) there are 3 LANs of 3 processes (n = 9, delta = 5):
links inside a LAN are the LAN delay above, links between LANs a shifted gamma of mean
20 ms (same cv2, shift 10 ms), set as per-link overrides.

Same inputs
-----------
The simulator draws sources, application-message delays and ACK-only-message delays from
three streams derived from the seed (model/sim.py), so every protocol run with one seed
sees the same application messages at the same times with the same link delays; only FIFO
clamping behind a protocol's own ACK-only messages can differ. The bench checks that every
application message has the same send time in all runs of a row, and fails if not.

Output
------
1. Per (source, load): mean index of latency (ToTo, all-ack), mean candidate width (ToTo,
   all-ack), mean latency (ToTo, all-ack) and speedup = all-ack / ToTo latency, each with
   000's figure beside it ("paper" columns).
2. Per row, for S-ToTo, G-ToTo and GL-ToTo: the share of (process, message) deliveries
   made earlier than ToTo (and, after a slash, later than ToTo); then the same on the
   wide-DAG topology, with ToTo's and all-ack's mean index of latency for reference.
   002: "as much as 10% of the messages delivered early by S-ToTo are not delivered by
   ToTo"; "GL-ToTo performs better than ToTo with wide causal graphs".
3. Simulator throughput for ToTo at n = 4, 8, 16 and 32 (Poisson, 100 msgs/s total, the
   same messages): application deliveries (one per process and message) per CPU-second,
   the CPU time being ``time.process_time()`` around the ``simulate`` call alone (not
   wall time: other processes on the machine then count less). Each figure is the best
   of ``--repeat`` runs, ToTo and all-ack alternating, and ToTo is shown beside all-ack
   measured in the same run: machines are noisy, the ratios count more than the
   figures. The growth column checks the cost per delivery against 000's
   O(n_p + n_c^2) per activation (n_p processors, n_c candidates): microseconds per
   delivery divided by (n + mean width^2), relative to n = 8. It should not grow with n.

``--quick`` runs 400 messages at loads 50 and 200 (and n = 4 and 8 for throughput, once).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence

from tomkit.model.net.links import Delay
from tomkit.model.sim import SimConfig, SimResult, simulate

__all__ = ["PAPER", "cpu_rate", "main", "run_all", "table_rows", "throughput_rows", "wide_rows"]

LAN = Delay("gamma", mean=0.001, cv2=0.05)
INTER_LAN = Delay("gamma", mean=0.020, cv2=0.05)
LOADS = (50, 100, 150, 200)
SOURCES = ("periodic", "poisson")
VARIANTS = ("s-toto", "g-toto", "gl-toto")

#: 000 Tables 2 and 3: (source, load) -> (iol ToTo, width ToTo, width all-ack,
#: latency ToTo ms, latency all-ack ms, speedup); all-ack's index of latency is 8.00
PAPER: dict[tuple[str, int], tuple[float, float, float, float, float, float]] = {
    ("periodic", 50): (5.10, 1.12, 1.69, 76.68, 135.02, 1.76),
    ("periodic", 100): (5.42, 1.39, 1.31, 42.31, 68.78, 1.63),
    ("periodic", 150): (5.36, 1.44, 1.81, 29.17, 45.59, 1.56),
    ("periodic", 200): (5.90, 1.72, 1.48, 23.80, 43.71, 1.84),
    ("poisson", 50): (5.11, 1.15, 1.13, 114.10, 385.25, 3.38),
    ("poisson", 100): (5.31, 1.29, 1.27, 60.98, 188.06, 3.08),
    ("poisson", 150): (5.54, 1.42, 1.42, 44.10, 133.09, 3.01),
    ("poisson", 200): (5.89, 1.63, 1.58, 39.37, 102.33, 2.60),
}


def _say(text: str) -> None:
    print(text, flush=True)


def run_one(protocol: str, n: int, source: str, load: float, messages: int, seed: int,
            delta: int | None = None, link_delays: dict | None = None,
            label: str = "", log: Callable[[str], None] = _say) -> SimResult:
    """One run at total ``load`` msgs/s (``load / n`` per process); logs one line."""
    cfg = SimConfig(protocol=protocol, n=n, options={"delta": delta}, source=source, rate=load / n,
                    messages=messages, delay=LAN, link_delays=link_delays or {}, seed=seed,
                    trace_id=f"{protocol}-{source}-{load}")
    res = simulate(cfg)
    s = res.stats
    log(f"  run {label or 'lan'} {source:8s} load {load:>4} n {n:2d} {protocol:8s}: "
        f"{s['deliveries']} deliveries, iol {s['mean_index_of_latency']:.2f}, "
        f"latency {1000 * s['mean_latency']:.2f} ms, undelivered {s['undelivered']}, "
        f"wall {s['wall_time']:.2f} s")
    return res


def _sends(res: SimResult) -> dict[str, float]:
    return {r["msg"]: r["time"] for r in res.records if r["kind"] == "send"}


def _delivers(res: SimResult) -> dict[tuple[str, str], float]:
    return {(r["process"], r["msg"]): r["time"] for r in res.records if r["kind"] == "deliver"}


def _compare(base: dict[tuple[str, str], float],
             other: dict[tuple[str, str], float]) -> tuple[float, float]:
    """Shares of ``base``'s deliveries that ``other`` makes earlier / later."""
    eps = 1e-12
    earlier = later = 0
    for k, t in base.items():
        u = other.get(k)
        if u is None:
            continue
        if u < t - eps:
            earlier += 1
        elif u > t + eps:
            later += 1
    total = len(base) or 1
    return earlier / total, later / total


def _row(source: str, load: int, runs: dict[str, SimResult]) -> dict:
    sends = _sends(runs["toto"])
    for p, r in runs.items():
        if _sends(r) != sends:
            raise RuntimeError(f"{p} did not get the same inputs as toto ({source}, {load})")
    toto, ack = runs["toto"].stats, runs["all-ack"].stats
    row = {
        "source": source, "load": load, "messages": toto["sends"], "seed": toto["seed"],
        "iol_toto": toto["mean_index_of_latency"], "iol_ack": ack["mean_index_of_latency"],
        "width_toto": toto["mean_width"], "width_ack": ack["mean_width"],
        "lat_toto_ms": 1000 * toto["mean_latency"], "lat_ack_ms": 1000 * ack["mean_latency"],
        "undelivered": sum(r.stats["undelivered"] for r in runs.values()),
    }
    row["speedup"] = row["lat_ack_ms"] / row["lat_toto_ms"]
    base = _delivers(runs["toto"])
    for v in VARIANTS:
        if v in runs:
            e, lt = _compare(base, _delivers(runs[v]))
            row[f"earlier_{v}"], row[f"later_{v}"] = e, lt
            row[f"lat_{v}_ms"] = 1000 * runs[v].stats["mean_latency"]
            row[f"iol_{v}"] = runs[v].stats["mean_index_of_latency"]
    return row


def table_rows(messages: int = 4000, seed: int = 1, loads: Sequence[int] = LOADS,
               sources: Sequence[str] = SOURCES, variants: bool = True,
               log: Callable[[str], None] = _say) -> list[dict]:
    """Sections 1 and 2 on the LAN (n = 8, delta = 4): one dict per (source, load)."""
    rows = []
    protocols = ("all-ack", "toto") + (VARIANTS if variants else ())
    for source in sources:
        for load in loads:
            runs = {p: run_one(p, 8, source, load, messages, seed, delta=4, log=log)
                    for p in protocols}
            rows.append(_row(source, load, runs))
    return rows


def wide_links(lans: int = 3, size: int = 3) -> dict[tuple[int, int], Delay]:
    """Per-link overrides: INTER_LAN between processes of different LANs."""
    n = lans * size
    return {(i, j): INTER_LAN for i in range(n) for j in range(n)
            if i != j and i // size != j // size}


def wide_rows(messages: int = 4000, seed: int = 1, loads: Sequence[int] = LOADS,
              sources: Sequence[str] = SOURCES,
              log: Callable[[str], None] = _say) -> list[dict]:
    """Section 2 on 3 LANs of 3 processes (n = 9, delta = 5 for every rule)."""
    links = wide_links()
    rows = []
    for source in sources:
        for load in loads:
            runs = {p: run_one(p, 9, source, load, messages, seed, delta=5, link_delays=links,
                               label="wide", log=log)
                    for p in ("all-ack", "toto") + VARIANTS}
            rows.append(_row(source, load, runs))
    return rows


def cpu_rate(protocol: str, n: int, load: float, messages: int, seed: int,
             log: Callable[[str], None] = _say) -> tuple[float, dict]:
    """One throughput run: application deliveries per CPU-second of the simulation
    (``time.process_time`` around ``simulate``), and the run's stats."""
    cfg = SimConfig(protocol=protocol, n=n, source="poisson", rate=load / n,
                    messages=messages, delay=LAN, seed=seed, trace_id=f"tput-{protocol}-{n}")
    t0 = time.process_time()
    s = simulate(cfg).stats
    cpu = time.process_time() - t0
    log(f"  run tput poisson load {load:>4} n {n:2d} {protocol:8s}: {s['deliveries']} "
        f"deliveries, cpu {cpu:.2f} s, {s['deliveries'] / cpu:.0f} deliveries per cpu-s")
    return s["deliveries"] / cpu, s


def throughput_rows(messages: int = 4000, seed: int = 1,
                    ns: Sequence[int] = (4, 8, 16, 32), load: int = 100, repeat: int = 3,
                    log: Callable[[str], None] = _say) -> list[dict]:
    """Section 3: deliveries per CPU-second, ToTo and all-ack alternating, best of
    ``repeat`` runs each, per n (Poisson), and the cost per delivery relative to
    n + width^2 (see the module docstring)."""
    rows = []
    for n in ns:
        out, width = {"all-ack": 0.0, "toto": 0.0}, 0.0
        for _ in range(max(repeat, 1)):
            for p in ("all-ack", "toto"):
                rate, s = cpu_rate(p, n, load, messages, seed, log=log)
                out[p] = max(out[p], rate)
                if p == "toto":
                    width = s["mean_width"]
        us = 1e6 / out["toto"]
        rows.append({"n": n, "toto_per_s": out["toto"], "ack_per_s": out["all-ack"],
                     "ratio": out["toto"] / out["all-ack"], "width": width,
                     "us_per_delivery": us, "per_unit": us / (n + width ** 2)})
    base = next((r["per_unit"] for r in rows if r["n"] == 8), rows[0]["per_unit"])
    for r in rows:
        r["growth"] = r["per_unit"] / base
    return rows


def run_all(messages: int = 4000, seed: int = 1, quick: bool = False, repeat: int = 3,
            log: Callable[[str], None] = _say) -> dict[str, list[dict]]:
    loads = (50, 200) if quick else LOADS
    ns = (4, 8) if quick else (4, 8, 16, 32)
    return {"lan": table_rows(messages, seed, loads, log=log),
            "wide": wide_rows(messages, seed, loads, log=log),
            "throughput": throughput_rows(messages, seed, ns, repeat=1 if quick else repeat,
                                          log=log)}


def _f(x: float, fmt: str = ".2f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def print_tables(res: dict[str, list[dict]], seed: int, messages: int) -> None:
    print(f"\nseed {seed}, {messages} messages per run; load = total msgs/s (load/n per "
          "process); LAN delay shifted gamma mean 1 ms")
    print("\n1. ToTo (n 8, delta 4) vs all-ack, 000 Tables 2-3 ('paper' = 000's figure)")
    hdr = (f"{'source':8s} {'load':>4s} | {'iolToTo':>7s} {'paper':>5s} {'iolAck':>6s} "
           f"{'paper':>5s} | {'wToTo':>5s} {'paper':>5s} {'wAck':>5s} {'paper':>5s} | "
           f"{'latToTo':>7s} {'paper':>6s} {'latAck':>7s} {'paper':>6s} | "
           f"{'speedup':>7s} {'paper':>5s}")
    print(hdr)
    print("-" * len(hdr))
    for r in res["lan"]:
        p = PAPER.get((r["source"], r["load"]))
        pz = p or (math.nan,) * 6
        print(f"{r['source']:8s} {r['load']:>4d} | {_f(r['iol_toto']):>7s} {_f(pz[0]):>5s} "
              f"{_f(r['iol_ack']):>6s} {_f(8.0 if p else math.nan):>5s} | "
              f"{_f(r['width_toto']):>5s} {_f(pz[1]):>5s} {_f(r['width_ack']):>5s} "
              f"{_f(pz[2]):>5s} | {_f(r['lat_toto_ms'], '.1f'):>7s} {_f(pz[3], '.1f'):>6s} "
              f"{_f(r['lat_ack_ms'], '.1f'):>7s} {_f(pz[4], '.1f'):>6s} | "
              f"{_f(r['speedup']):>7s} {_f(pz[5]):>5s}")
    print("(latencies in ms; width = mean candidate-set width when a delivery fired)")

    for key, title in (("lan", "LAN, n 8, delta 4"),
                       ("wide", "wide DAG: 3 LANs x 3, 1 ms inside / 20 ms between, n 9, "
                                "delta 5")):
        print(f"\n2. Variants vs ToTo, {title}: % of deliveries earlier / later than ToTo")
        hdr = (f"{'source':8s} {'load':>4s} | {'iolToTo':>7s} {'iolAck':>6s} "
               f"{'latToTo':>7s} {'latAck':>7s} | "
               + " | ".join(f"{v:>17s}" for v in VARIANTS))
        print(hdr)
        print("-" * len(hdr))
        for r in res[key]:
            cells = []
            for v in VARIANTS:
                cells.append(f"{100 * r[f'earlier_{v}']:5.1f}/{100 * r[f'later_{v}']:4.1f}% "
                             f"{r[f'lat_{v}_ms']:5.1f}")
            print(f"{r['source']:8s} {r['load']:>4d} | {_f(r['iol_toto']):>7s} "
                  f"{_f(r['iol_ack']):>6s} {_f(r['lat_toto_ms'], '.1f'):>7s} "
                  f"{_f(r['lat_ack_ms'], '.1f'):>7s} | " + " | ".join(cells))
        print("(per variant: earlier/later % of (process, message) deliveries, then its mean "
              "latency in ms; 002: S-ToTo up to 10% more early deliveries)")

    print("\n3. Simulator throughput (Poisson, 100 msgs/s total; deliveries per CPU-second of "
          "the simulation, best of the runs)")
    print(f"{'n':>3s} | {'ToTo':>9s} | {'all-ack':>9s} | {'ToTo/all-ack':>12s} | "
          f"{'width':>5s} | {'us/deliv':>8s} | {'growth':>6s}")
    for r in res["throughput"]:
        print(f"{r['n']:>3d} | {r['toto_per_s']:>9.0f} | {r['ack_per_s']:>9.0f} | "
              f"{r['ratio']:>12.2f} | {r['width']:>5.2f} | {r['us_per_delivery']:>8.1f} | "
              f"{r['growth']:>6.2f}")
    print("(growth: us per delivery / (n + width^2), relative to n = 8; 000: the rule costs "
          "O(n_p + n_c^2) per activation)")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=None,
                    help="application messages per run (default 4000; 400 with --quick)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true",
                    help="400 messages, loads 50 and 200, throughput at n 4 and 8 (once)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="throughput runs per protocol and n, the best counts (default 3)")
    args = ap.parse_args(argv)
    messages = args.messages if args.messages is not None else (400 if args.quick else 4000)
    t0 = time.perf_counter()
    print(f"toto_tables: seed {args.seed}, {messages} messages, quick={args.quick}", flush=True)
    res = run_all(messages, args.seed, args.quick, args.repeat)
    print_tables(res, args.seed, messages)
    print(f"\ntotal wall time {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
