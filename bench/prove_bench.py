"""Time to prove each rule per n (``tomkit prove``'s Z3 path, all four properties, every
allowed delta, K = 3): issues 4 and 19's benchmark. Issue 19's target: every built-in
rule, every delta, at n = 8 within 10 minutes (stretch: n = 10).

Baselines, measured in the same run: the classic encoding (issue 4's, ``--encoding
classic``) of the same rule at the same n, up to ``--classic-max-n`` (it takes about 12
minutes per delta of ToTo at n = 8); for the rules that read the rank (GL-ToTo), the
facts encoding with only the split by slot (``rank_symmetry=False``, issue 19's first
version), up to ``--split-max-n``; and all-ack with the facts encoding at the same n
(the simplest rule), so the ratios say what the new encoding and reductions gain and
what a rule's own formulas cost. The last column is the figure docs/prove.md recorded
for issue 19's first version on this machine (not a same-run baseline: the cores are
shared, so compare it with care).

    .venv/bin/python bench/prove_bench.py --rules toto,s-toto,g-toto,gl-toto --max-n 8
    .venv/bin/python bench/prove_bench.py --rules toto --min-n 8 --max-n 12 --budget 600
    .venv/bin/python bench/prove_bench.py --rules gl-toto --min-n 8 --max-n 8 --classic-max-n 0

``--per-delta``: one line per (rule, n, delta) instead, with its verdict, CPU and wall
seconds, the load average at its end and each query's seconds (issue 30: every rule,
every delta, at n = 10 within 10 minutes each); ``--budget`` is then each delta's Z3
timeout, and ``--jsonl PATH`` appends each line as a JSON record:

    nice -n 10 .venv/bin/python bench/prove_bench.py --per-delta --min-n 10 --max-n 10 \
        --budget 600 --jsonl /tmp/n10.jsonl

``--budget``: per rule, stop at the first n whose proof takes longer than this many
seconds (the n is then reported as not proved within the budget); each query gets the
budget as its Z3 timeout. Prints one line per (rule, n) and, per rule, the largest n
proved within the budget.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from tqdm import tqdm

from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule
from tomkit.model.toto.mutants import resolve_rule

#: seconds for every delta, as docs/prove.md recorded them for issue 19's first version
#: (facts encoding; symmetry for the rank-free rules, the split alone for GL-ToTo)
RECORDED = {
    "toto": {6: 12.6, 7: 7.9, 8: 57.1, 10: 428.7},
    "s-toto": {6: 4.9, 7: 2.4, 8: 53.9},
    "g-toto": {6: 12.6, 7: 12.1, 8: 233.3},
    "gl-toto": {6: 43.1, 7: 308.0},
}

#: the rules whose own baseline is the split alone
RANKED = ("gl-toto",)


def prove_all(name: str, n: int, k: int, budget: float | None,
              encoding: str = "facts", rank_symmetry: bool = True) -> tuple[str, float, float]:
    """Status, wall seconds and CPU seconds (Z3 solves in this process; on shared cores
    the wall time mostly measures the load: at load 18, 600 s of wall were 56 s of CPU)."""
    rule = resolve_rule(name)
    t0, c0 = time.perf_counter(), time.process_time()
    status = "proved"
    for d in allowed_deltas(rule, n):
        left = None if budget is None else max(1.0, budget - (time.perf_counter() - t0))
        o = prove_rule(name, rule, n, d, k, timeout=left, encoding=encoding,
                       rank_symmetry=rank_symmetry)
        if o.status != "proved":
            status = o.status
            break
        if budget is not None and time.perf_counter() - t0 > budget:
            status = "unknown"
            break
    return status, time.perf_counter() - t0, time.process_time() - c0


def per_delta(rules: list[str], n: int, k: int, budget: float | None,
              deltas: list[int | None] | None, jsonl: str | None,
              cpu_limit: float | None = None) -> None:
    """One line per (rule, delta) at n: verdict, CPU seconds (Z3 solves in this
    process), wall seconds, the 1-minute load average at the end, each query's seconds.
    With ``cpu_limit``, each case runs in a child process stopped (SIGXCPU) after that
    many CPU seconds, and is reported as over the limit."""
    for name in rules:
        rule = resolve_rule(name)
        for d in allowed_deltas(rule, n):
            if deltas is not None and d not in deltas:
                continue
            if cpu_limit is None:
                _one_case(name, rule, n, d, k, budget, jsonl)
            else:
                _child_case(name, n, d, k, budget, jsonl, cpu_limit)


def _row(name: str, n: int, d: int | None, status: str, cpu: float, wall: float,
         load: float, queries: str) -> str:
    return (f"{name:10} {n:>3} {'-' if d is None else d:>5} {status:>14} "
            f"{cpu:>9.1f} {wall:>9.1f} {load:>6.1f}  {queries}")


def _record(jsonl: str | None, rec: dict) -> None:
    if jsonl:
        with open(jsonl, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")


def _one_case(name: str, rule, n: int, d: int | None, k: int, budget: float | None,
              jsonl: str | None) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    o = prove_rule(name, rule, n, d, k, timeout=budget)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    load = os.getloadavg()[0]
    qs = " ".join(f"{p}={st}:{t:.1f}" for p, (st, t) in o.per_property.items())
    print(_row(name, n, d, o.status, cpu, wall, load, qs), flush=True)
    _record(jsonl, {
        "rule": name, "n": n, "delta": d, "k": k, "status": o.status,
        "cpu": round(cpu, 2), "wall": round(wall, 2), "load1": round(load, 1),
        "budget": budget,
        "queries": {p: [st, round(t, 2)] for p, (st, t) in o.per_property.items()},
        "parts_cpu": o.parts_cpu})


def _child_case(name: str, n: int, d: int | None, k: int, budget: float | None,
                jsonl: str | None, cpu_limit: float) -> None:
    """The case in a child process under RLIMIT_CPU (Z3 cannot be stopped by CPU time
    from inside: its timeout is wall-clock, which on shared cores measures the load)."""
    import resource
    import subprocess

    def limit() -> None:
        secs = int(cpu_limit)
        resource.setrlimit(resource.RLIMIT_CPU, (secs, secs + 10))

    cmd = [sys.executable, __file__, "--per-delta", "--rules", name, "--min-n", str(n),
           "--max-n", str(n), "--k", str(k), f"--deltas={'-' if d is None else d}"]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    if jsonl:
        cmd += ["--jsonl", jsonl]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, preexec_fn=limit, capture_output=True, text=True)
    rows = [ln for ln in p.stdout.splitlines() if not ln.startswith(("#", "rule"))]
    if p.returncode == 0 and rows:
        print("\n".join(rows), flush=True)
        return
    if p.returncode >= 0:  # not stopped by the limit: a failure to show, not hide
        sys.stderr.write(p.stderr)
        raise SystemExit(f"{name} n={n} delta={d}: exit {p.returncode}")
    wall, load = time.perf_counter() - t0, os.getloadavg()[0]
    status = f"over {cpu_limit:.0f} cpu s"
    print(_row(name, n, d, status.replace(" ", "-"), cpu_limit, wall, load,
               f"stopped by signal {-p.returncode}"), flush=True)
    _record(jsonl, {"rule": name, "n": n, "delta": d, "k": k, "status": status,
                    "cpu": cpu_limit, "wall": round(wall, 2), "load1": round(load, 1),
                    "budget": budget, "queries": {}, "parts_cpu": {}})


def table(jsonl: str) -> str:
    """The per-delta records of ``jsonl`` as a Markdown table (the last record of each
    (rule, n, delta)), for docs/prove.md."""
    last: dict[tuple, dict] = {}
    with open(jsonl, encoding="utf-8") as f:
        for ln in f:
            if ln.strip():
                r = json.loads(ln)
                last[r["rule"], r["n"], r["delta"]] = r
    out = ["| rule | n | delta | verdict | CPU s | wall s | load | slowest query (wall s) |",
           "|---|---|---|---|---|---|---|---|"]
    order = {name: i for i, name in enumerate(("all-ack", "toto", "s-toto", "g-toto",
                                               "gl-toto"))}
    for (name, n, d), r in sorted(last.items(), key=lambda kv: (
            order.get(kv[0][0], 99), kv[0][0], kv[0][1], kv[0][2] or 0)):
        qs = [(t, p) for p, (st, t) in r["queries"].items() if st != "implied"]
        slow = f"{max(qs)[1]} {max(qs)[0]:.0f}" if qs else "-"
        out.append(f"| {name} | {n} | {'-' if d is None else d} | {r['status']} | "
                   f"{r['cpu']:.1f} | {r['wall']:.0f} | {r['load1']:.1f} | {slow} |")
    return "\n".join(out)


def _load() -> str:
    """The machine's load average (the cores are shared: say how busy they were)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="toto,s-toto,g-toto,gl-toto")  # all-ack: the baseline
    ap.add_argument("--min-n", type=int, default=3)
    ap.add_argument("--max-n", type=int, default=7)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--budget", type=float, default=None, metavar="SECONDS")
    ap.add_argument("--classic-max-n", type=int, default=7, metavar="N",
                    help="measure the classic encoding up to this n (0: never)")
    ap.add_argument("--split-max-n", type=int, default=7, metavar="N",
                    help="measure GL-ToTo's split-only baseline up to this n (0: never)")
    ap.add_argument("--per-delta", action="store_true",
                    help="one line per (rule, n, delta); --budget is each delta's timeout")
    ap.add_argument("--deltas", default=None,
                    help="with --per-delta: only these (--deltas=1,2; - for a rule without delta)")
    ap.add_argument("--cpu-limit", type=float, default=None, metavar="SECONDS",
                    help="with --per-delta: each case in a child process stopped after "
                         "this many CPU seconds")
    ap.add_argument("--table", default=None, metavar="JSONL",
                    help="print the per-delta records of JSONL as a Markdown table")
    ap.add_argument("--jsonl", default=None, metavar="PATH",
                    help="with --per-delta: append each line as a JSON record")
    args = ap.parse_args(argv)
    rules = args.rules.split(",")
    if args.table:
        print(table(args.table))
        return 0
    if args.per_delta:
        print(f"# K = {args.k}; timeout per delta = {args.budget}; all four properties; "
              f"{_load()}")
        print(f"{'rule':10} {'n':>3} {'delta':>5} {'status':>14} {'cpu s':>9} "
              f"{'wall s':>9} {'load':>6}  queries (wall s)", flush=True)
        deltas = None if args.deltas is None else [
            None if x == "-" else int(x) for x in args.deltas.split(",")]
        for n in range(args.min_n, args.max_n + 1):
            per_delta(rules, n, args.k, args.budget, deltas, args.jsonl, args.cpu_limit)
        print(f"# {_load()}")
        return 0
    largest: dict[str, int] = {}
    done: set[str] = set()
    print(f"# K = {args.k}; budget = {args.budget}; all four properties, every delta; "
          f"classic encoding up to n = {args.classic_max_n}, split alone up to n = "
          f"{args.split_max_n}; {_load()}")
    print(f"{'rule':10} {'n':>3} {'status':>14} {'facts s':>9} {'classic s':>9} "
          f"{'speedup':>7} {'split s':>9} {'gain':>7} {'all-ack s':>9} {'ratio':>7} "
          f"{'recorded':>9} {'facts cpu':>9}")
    for n in tqdm(range(args.min_n, args.max_n + 1), desc="n", file=sys.stderr):
        _, base, _ = prove_all("all-ack", n, args.k, None)
        for name in rules:
            if name in done:
                continue
            status, secs, cpu = prove_all(name, n, args.k, args.budget)
            old = "-"
            speed = "-"
            if n <= args.classic_max_n:
                cstatus, csecs, _ = prove_all(name, n, args.k, args.budget, "classic")
                if cstatus != status and cstatus != "unknown":
                    print(f"# DISAGREE {name} n={n}: facts {status}, classic {cstatus}")
                    return 1
                old, speed = f"{csecs:.1f}", f"{csecs / secs:.1f}"
            split, gain = "-", "-"
            if name in RANKED and n <= args.split_max_n:
                sstatus, ssecs, _ = prove_all(name, n, args.k, args.budget, rank_symmetry=False)
                if sstatus != status and sstatus != "unknown":
                    print(f"# DISAGREE {name} n={n}: reduced {status}, split {sstatus}")
                    return 1
                split, gain = f"{ssecs:.1f}", f"{ssecs / secs:.1f}"
            rec = RECORDED.get(name, {}).get(n)
            print(f"{name:10} {n:>3} {status:>14} {secs:>9.1f} {old:>9} {speed:>7} "
                  f"{split:>9} {gain:>7} {base:>9.1f} {secs / base:>7.1f} "
                  f"{'-' if rec is None else f'{rec:.1f}':>9} {cpu:>9.1f}", flush=True)
            if status == "proved" and (args.budget is None or secs <= args.budget):
                largest[name] = n
            else:
                done.add(name)
    print(f"# {_load()}")
    for name in rules:
        print(f"# {name}: largest n proved"
              + (f" within {args.budget:.0f} s" if args.budget else "")
              + f": {largest.get(name, 'none')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
