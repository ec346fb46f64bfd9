"""002 section 7 measured: S-ToTo, G-ToTo and GL-ToTo against ToTo, with delta below n/2 on
wide DAGs, the regime 002 was written for.

    python bench/successors_section7.py [--messages 4000] [--seed 1] [--quick]

Sources: 002 (Johnson, Maugis) section 7 ("Improvements"), section 4 (G-ToTo: "If the
network consists of several LANs connected by gateways, it might become unlikely that any
message will receive half of the votes"), section 6 (the example: n = 12, delta = 4) and
section 8 ("Small values of delta improve performance for wide causal DAG, while delta =
n/2 seems to be a good choice for narrow graphs"); 000 (Dolev, Kramer, Malki) section 6
for the set-up. bench/toto_tables.py measures G-ToTo at delta >= n/2 only, where 002
itself says it "reduces to the S-ToTo protocol".

Topologies (links: bench/toto_tables.py's shifted gamma, 1 ms mean inside a LAN, 20 ms
between LANs):

* ``lan8``: one LAN of 8, 000's and 002's testbed ("n = 8 processor system");
* ``wide9``: 3 LANs of 3 (toto_tables.py's wide DAG);
* ``wide12``: 3 LANs of 4, n = 12 as in 002 section 6's example (delta = 4 there).

ToTo and S-ToTo run at their least delta, ceil(n/2) (000 and 002 restrict them to delta
>= n/2); G-ToTo and GL-ToTo at every delta of ``DELTAS`` (at ceil(n/2) too, where G-ToTo
must equal S-ToTo: checked, the run fails otherwise). Every run of one (topology, source,
load) sees the same application messages at the same times with the same link delays
(model/sim.py's three streams; checked).

002 section 7's claims, and what is printed for each:

1. "As much as 10% of the messages delivered early by S-Toto are not delivered by Toto":
   of the (process, message) deliveries S-ToTo makes by its early rule, the share that
   ToTo, on the same inputs, makes by its default rule, and the share it makes later in
   time; and of those S-ToTo makes before NTail(G) = n, the share ToTo makes at NTail(G)
   = n. ToTo delivers every message in the end, so "not delivered" can only mean "not
   delivered early" (decision). Against 000's ToTo (model/toto/rules.py) and against ToTo as
   002 section 3 restates it (``toto-002``, :func:`toto_as_002_restates`).
2. "As much as 5% of all messages can be delivered early with the lexicographic order":
   the share of GL-ToTo's deliveries made by its prefix clause (002 section 5), and the
   share of its deliveries made earlier than G-ToTo's at the same delta.
3. "GL-Toto performs better than Toto with wide causal graphs. The latter uses the default
   delivery rule (Ntail(G) = n) most of the time, while GL-Toto can deliver messages when
   it receives more than n - delta votes": per rule, the share of deliveries by the
   default rule, the mean latency, and the shares delivered earlier / later than ToTo.
4. "With delta = n/2, the average Ntail(G) is 5.12" (n = 8): the mean NTail(G) at
   delivery of every rule on lan8 (no crashes here, so NTail(G) is 000's index of
   latency). The throughput figure (400 msgs/s on a 1 Mbit/s Ethernet) is the testbed's,
   not a model's, and is not reproduced.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toto_tables import LAN, wide_links  # noqa: E402  (bench/ is not a package)

from tomkit.model.sim import SimConfig  # noqa: E402

# ToTo as 002 section 3 restates it, as printed (NTail(s') > n - delta) and with ">=":
# not 000's ToTo, and not safe (``tomkit prove`` refutes agreement at n = 6, delta = 3);
# model/toto/mutants.py has them (the first is the mutant ``toto-002-restated``). 002's "10 %"
# of claim 1 compares S-ToTo with *this* ToTo, so it is measured too, and the bench checks
# every run for agreement (``agree``) and reports it.
from tomkit.model.toto.mutants import toto_002_restated as toto_as_002_restates  # noqa: E402
from tomkit.model.toto.mutants import (  # noqa: E402
    toto_002_restated_ge as toto_as_002_restates_ge,
)
from tomkit.runs.toto import Measured, mean, simulate_measured  # noqa: E402

__all__ = ["DELTAS", "TOPOLOGIES", "claims", "main", "topology_rows", "toto_as_002_restates",
           "toto_as_002_restates_ge"]

#: name -> (n, LANs, processes per LAN)
TOPOLOGIES = {"lan8": (8, 1, 8), "wide9": (9, 3, 3), "wide12": (12, 3, 4)}
#: G-ToTo's and GL-ToTo's deltas per topology (the last is ceil(n/2), ToTo's own)
DELTAS = {"lan8": (2, 3, 4), "wide9": (2, 3, 4, 5), "wide12": (3, 4, 5, 6)}
LOADS = (100, 400)
SOURCES = ("poisson", "periodic")


def _say(text: str) -> None:
    print(text, flush=True)


def run(protocol: str, topo: str, source: str, load: float, messages: int, seed: int,
        delta: int, log: Callable[[str], None] = _say) -> Measured:
    """One measured run; ``protocol`` "toto-002" is ToTo with :func:`toto_as_002_restates`."""
    n, lans, size = TOPOLOGIES[topo]
    links = wide_links(lans, size) if lans > 1 else {}
    options: dict = {"delta": delta}
    if protocol == "toto-002":
        protocol, options["rule"] = "toto", toto_as_002_restates
    cfg = SimConfig(protocol=protocol, n=n, options=options, source=source,
                    rate=load / n, messages=messages, delay=LAN, link_delays=links,
                    seed=seed, trace_id=f"{protocol}-{delta}-{topo}-{source}-{load}")
    t0 = time.perf_counter()
    m = simulate_measured(cfg)
    s = m.stats
    log(f"  run {topo:6s} {source:8s} load {load:>4} {protocol:8s} delta {delta}: "
        f"{s['deliveries']} deliveries, NTail {s['mean_index_of_latency']:.2f}, latency "
        f"{1000 * s['mean_latency']:.2f} ms, undelivered {s['undelivered']}, "
        f"{time.perf_counter() - t0:.1f} s")
    if s["undelivered"]:
        raise RuntimeError(f"{cfg.trace_id}: {s['undelivered']} undelivered")
    return m


def _times(m: Measured) -> dict[tuple[str, str], tuple[float, str, bool]]:
    """(process, message) -> (delivery time, clause, made before NTail(G) = n)."""
    return {(r.process, r.msg): (r.time, r.clause, r.iol < m.n) for r in m.rows}


def _sends(m: Measured) -> dict[str, float]:
    return {r["msg"]: r["time"] for r in m.result.records if r["kind"] == "send"}


def _vs(base: dict, other: dict) -> tuple[float, float]:
    """Shares of ``base``'s deliveries that ``other`` makes earlier / later."""
    eps = 1e-12
    earlier = later = 0
    for k, (t, _, _) in base.items():
        u = other[k][0]
        earlier += u < t - eps
        later += u > t + eps
    return earlier / len(base), later / len(base)


def _early_not_early(other: dict, toto: dict) -> tuple[int, float, float, float]:
    """Claim 1: of ``other``'s early deliveries (clause early or prefix), how many, the
    share ToTo makes by its default rule, and the share ToTo makes later in time; then, of
    ``other``'s deliveries made before NTail(G) = n, the share ToTo makes at NTail(G) = n
    (the second reading of "early": before hearing from every processor)."""
    early = [k for k, (_, c, _) in other.items() if c != "default"]
    before = [k for k, (_, _, b) in other.items() if b]
    at_n = sum(not toto[k][2] for k in before) / len(before) if before else math.nan
    if not early:
        return 0, math.nan, math.nan, at_n
    default = sum(toto[k][1] == "default" for k in early)
    later = sum(toto[k][0] > other[k][0] + 1e-12 for k in early)
    return len(early), default / len(early), later / len(early), at_n


def _agree(m: Measured) -> bool:
    """Whether every process delivered the same sequence (no crashes here, so every run
    that is safe and live does)."""
    seqs: dict[str, list[str]] = {}
    for r in m.rows:
        seqs.setdefault(r.process, []).append(r.msg)
    return len({tuple(v) for v in seqs.values()}) <= 1


def _summary(m: Measured) -> dict:
    rows = m.rows
    k = len(rows)
    n = m.n
    return {"agree": _agree(m),"lat_ms": 1000 * mean(r.latency for r in rows),
            "ntail": mean(r.iol for r in rows), "omega": mean(r.omega for r in rows),
            "early": sum(r.clause == "early" for r in rows) / k,
            "default": sum(r.clause == "default" for r in rows) / k,
            "prefix": sum(r.clause == "prefix" for r in rows) / k,
            "before_all": sum(r.iol < n for r in rows) / k}


def topology_rows(topo: str, messages: int = 4000, seed: int = 1,
                  loads: Sequence[int] = LOADS, sources: Sequence[str] = SOURCES,
                  deltas: Sequence[int] | None = None,
                  log: Callable[[str], None] = _say) -> list[dict]:
    """One dict per (source, load, rule, delta) on ``topo``, compared with ToTo."""
    n = TOPOLOGIES[topo][0]
    half = (n + 1) // 2
    deltas = DELTAS[topo] if deltas is None else deltas
    out = []
    for source in sources:
        for load in loads:
            runs: dict[tuple[str, int], Measured] = {}
            runs[("all-ack", half)] = run("all-ack", topo, source, load, messages, seed, half,
                                          log)
            for p in ("toto", "toto-002", "s-toto"):
                runs[(p, half)] = run(p, topo, source, load, messages, seed, half, log)
            for d in deltas:
                for p in ("g-toto", "gl-toto"):
                    runs[(p, d)] = run(p, topo, source, load, messages, seed, d, log)
            sends = _sends(runs[("toto", half)])
            for key, m in runs.items():
                if _sends(m) != sends:
                    raise RuntimeError(f"{key} did not get ToTo's inputs ({topo}, {source}, "
                                       f"{load})")
            if ("g-toto", half) in runs:  # 002 section 4: G-ToTo is S-ToTo at delta >= n/2
                g, s = runs[("g-toto", half)], runs[("s-toto", half)]
                if [r[:3] for r in g.rows] != [r[:3] for r in s.rows]:
                    raise RuntimeError(f"G-ToTo and S-ToTo differ at delta {half} ({topo}, "
                                       f"{source}, {load})")
            toto = _times(runs[("toto", half)])
            toto002 = _times(runs[("toto-002", half)])
            for (p, d), m in runs.items():
                mine = _times(m)
                row = {"topo": topo, "n": n, "source": source, "load": load, "rule": p,
                       "delta": d, **_summary(m)}
                row["earlier"], row["later"] = _vs(toto, mine)
                (row["early_n"], row["early_toto_default"], row["early_toto_later"],
                 row["before_toto_at_n"]) = _early_not_early(mine, toto)
                (_, row["early_t002_default"], row["early_t002_later"],
                 row["before_t002_at_n"]) = _early_not_early(mine, toto002)
                if p == "gl-toto":
                    g = _times(runs[("g-toto", d)])
                    row["earlier_than_g"], row["later_than_g"] = _vs(g, mine)
                out.append(row)
    return out


def claims(rows: Sequence[dict]) -> dict:
    """The figures beside each claim of 002 section 7, over ``rows`` (module docstring):
    maxima over every topology, source and load for claims 1 and 2 (002 says "as much
    as"), means over the wide topologies for claim 3, and lan8 at delta 4 for claim 4."""
    s = [r for r in rows if r["rule"] == "s-toto"]
    gl = [r for r in rows if r["rule"] == "gl-toto"]
    wide = [r for r in rows if r["topo"] != "lan8"]
    cases = sorted({(r["topo"], r["source"], r["load"]) for r in wide})

    def nanmax(xs) -> float:
        xs = [x for x in xs if not math.isnan(x)]
        return max(xs) if xs else math.nan

    best_gl, toto_w = [], []
    for k in cases:
        sel = [r for r in wide if (r["topo"], r["source"], r["load"]) == k]
        best_gl.append(min((r for r in sel if r["rule"] == "gl-toto"),
                           key=lambda r: r["lat_ms"]))
        toto_w.append(next(r for r in sel if r["rule"] == "toto"))
    ntail: dict[tuple[str, int], dict[str, float]] = {}
    for r in rows:
        if r["topo"] == "lan8" and r["delta"] == 4:
            ntail.setdefault((r["source"], r["load"]), {})[r["rule"]] = r["ntail"]
    s_wide = [r for r in s if r["topo"] != "lan8"]
    s_lan = [r for r in s if r["topo"] == "lan8"]
    return {
        "s_earlier_wide": (min((r["earlier"] for r in s_wide), default=math.nan),
                           nanmax(r["earlier"] for r in s_wide)),
        "s_earlier_lan": (min((r["earlier"] for r in s_lan), default=math.nan),
                          nanmax(r["earlier"] for r in s_lan)),
        "s_later_max": nanmax(r["later"] for r in s),
        "s_early_toto_default_max": nanmax(r["early_toto_default"] for r in s),
        "s_early_toto_later_max": nanmax(r["early_toto_later"] for r in s),
        "s_before_toto_at_n_max": nanmax(r["before_toto_at_n"] for r in s),
        "s_early_t002_default_max": nanmax(r["early_t002_default"] for r in s),
        "s_early_t002_later_max": nanmax(r["early_t002_later"] for r in s),
        "s_before_t002_at_n_max": nanmax(r["before_t002_at_n"] for r in s),
        "gl_prefix_max": nanmax(r["prefix"] for r in gl),
        "gl_earlier_than_g_max": nanmax(r["earlier_than_g"] for r in gl),
        "toto_default_wide": mean(r["default"] for r in toto_w),
        "toto_at_n_wide": mean(1 - r["before_all"] for r in toto_w),
        "gl_best": [(k, b["delta"], b["lat_ms"], t["lat_ms"], b["default"],
                     1 - b["before_all"], 1 - t["before_all"])
                    for k, b, t in zip(cases, best_gl, toto_w)],
        "ntail_lan_half": ntail,
    }


def _f(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _pct(x: float) -> str:
    return _f(100 * x, "5.1f") if not math.isnan(x) else "    -"


def print_rows(rows: Sequence[dict]) -> None:
    keys = []
    for r in rows:
        k = (r["topo"], r["source"], r["load"])
        if k not in keys:
            keys.append(k)
    for topo, source, load in keys:
        sel = [r for r in rows if (r["topo"], r["source"], r["load"]) == (topo, source, load)]
        n = sel[0]["n"]
        print(f"\n{topo} (n {n}) {source} load {load} msgs/s: ToTo and S-ToTo at delta "
              f"{(n + 1) // 2}")
        hdr = (f"{'rule':8s} {'d':>2s} | {'lat ms':>7s} {'NTail':>5s} {'omega':>5s} | "
               f"{'early%':>6s} {'dflt%':>6s} {'prfx%':>6s} {'<n %':>6s} | "
               f"{'<ToTo%':>6s} {'>ToTo%':>6s} | {'Tdflt%':>6s} {'Tlate%':>6s} | "
               f"{'<G %':>5s}")
        print(hdr)
        print("-" * len(hdr))
        for r in sel:
            flag = "" if r["agree"] else "  DISAGREE"
            print(f"{r['rule']:8s} {r['delta']:>2d} | {r['lat_ms']:7.1f} {r['ntail']:5.2f} "
                  f"{r['omega']:5.2f} | {_pct(r['early']):>6s} {_pct(r['default']):>6s} "
                  f"{_pct(r['prefix']):>6s} {_pct(r['before_all']):>6s} | "
                  f"{_pct(r['earlier']):>6s} {_pct(r['later']):>6s} | "
                  f"{_pct(r['early_toto_default']):>6s} {_pct(r['early_toto_later']):>6s} | "
                  f"{_pct(r.get('earlier_than_g', math.nan)):>5s}{flag}")
    print("\n(early/dflt/prfx: share of deliveries by the rule's early, default and GL-ToTo's "
          "prefix clause; <n: made before NTail(G) = n; <ToTo, >ToTo: made earlier / later "
          "than ToTo's delivery of the same message at the same process; Tdflt, Tlate: of the "
          "rule's early deliveries, the share ToTo made by its default rule / later; <G: "
          "GL-ToTo's deliveries earlier than G-ToTo's at the same delta; DISAGREE: the "
          "processes' delivery sequences differ)")
    bad = [f"{r['rule']} ({r['topo']} {r['source']} {r['load']})" for r in rows
           if not r["agree"]]
    print("runs whose processes disagree: " + (", ".join(bad) if bad else "none"))


def print_claims(c: dict) -> None:
    print("\n002 section 7, claim by claim (simulated beside 002)")
    (wlo, whi), (llo, lhi) = c["s_earlier_wide"], c["s_earlier_lan"]
    print(f" 1. 002: 'as much as 10 % of the messages delivered early by S-Toto are not "
          f"delivered by Toto'. S-ToTo makes {_pct(wlo).strip()}-{_pct(whi).strip()} % of "
          f"all deliveries earlier than ToTo on the wide DAGs, {_pct(llo).strip()}-"
          f"{_pct(lhi).strip()} % on the LAN, and at most {_pct(c['s_later_max']).strip()} % "
          f"later. Of S-ToTo's early-rule deliveries, ToTo makes at most "
          f"{_pct(c['s_early_toto_default_max']).strip()} % by its default rule and at most "
          f"{_pct(c['s_early_toto_later_max']).strip()} % later; of S-ToTo's deliveries "
          f"before NTail(G) = n, ToTo makes at most "
          f"{_pct(c['s_before_toto_at_n_max']).strip()} % at NTail(G) = n")
    print(f"    Against ToTo as 002 restates it (toto-002): at most "
          f"{_pct(c['s_early_t002_default_max']).strip()} % by its default rule, "
          f"{_pct(c['s_early_t002_later_max']).strip()} % later, "
          f"{_pct(c['s_before_t002_at_n_max']).strip()} % at NTail(G) = n")
    print(f" 2. 002: 'as much as 5 % of all messages can be delivered early with the "
          f"lexicographic order'. GL-ToTo's prefix clause delivers at most "
          f"{_pct(c['gl_prefix_max']).strip()} %; at most "
          f"{_pct(c['gl_earlier_than_g_max']).strip()} % are earlier than G-ToTo's at the "
          "same delta")
    print(f" 3. 002: ToTo 'uses the default delivery rule (Ntail(G) = n) most of the time' on "
          f"wide DAGs. Here ToTo's default clause delivers "
          f"{_pct(c['toto_default_wide']).strip()} % and "
          f"{_pct(c['toto_at_n_wide']).strip()} % are made at NTail(G) = n (mean over the "
          "wide cases). GL-ToTo at its best delta against ToTo:")
    for (topo, source, load), d, lat, tlat, _dflt, at_n, t_at_n in c["gl_best"]:
        print(f"    {topo:6s} {source:8s} load {load:>4}: delta {d}, latency {lat:6.1f} ms "
              f"vs ToTo {tlat:6.1f} ms (x{lat / tlat:.2f}); at NTail(G) = n "
              f"{100 * at_n:5.1f} % vs ToTo {100 * t_at_n:5.1f} %")
    print(" 4. 002: 'With delta = n/2, the average Ntail(G) is 5.12' (n = 8). Mean NTail(G) at "
          "delivery, lan8, delta 4:")
    for (source, load), nt in sorted(c["ntail_lan_half"].items()):
        print(f"    {source:8s} load {load:>4}: " + ", ".join(f"{k} {v:.2f}"
                                                          for k, v in nt.items()))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=None,
                    help="application messages per run (default 4000; 400 with --quick)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true",
                    help="400 messages, Poisson only, load 400, lan8 and wide9")
    ap.add_argument("--topology", action="append", choices=sorted(TOPOLOGIES),
                    help="run only these (repeatable; default all)")
    args = ap.parse_args(argv)
    messages = args.messages if args.messages is not None else (400 if args.quick else 4000)
    topos = args.topology or (["lan8", "wide9"] if args.quick else list(TOPOLOGIES))
    loads = (400,) if args.quick else LOADS
    sources = ("poisson",) if args.quick else SOURCES
    t0 = time.perf_counter()
    print(f"successors_section7: seed {args.seed}, {messages} messages per run, "
          f"topologies {', '.join(topos)}, quick={args.quick}", flush=True)
    rows = [r for t in topos for r in topology_rows(t, messages, args.seed, loads, sources)]
    print_rows(rows)
    print_claims(claims(rows))
    print(f"\ntotal wall time {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
