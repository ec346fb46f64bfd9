"""Causal order and latency across the cut (checker/stream/cutdeps.py, latencies.py):
a long trace with deps and a latency bound, broken early, against the same trace clean
and against the code before (the cut refused for causal order and latency: every held
record checked), each run its own niced process, same files, same session.

The trace is bench/stream_bench.py's (traces/long_trace.py: 8 processes, every process
delivering every message, times on every record) with deps: each message depends on the
one before it. The breach: p0's deliveries ``--at`` and ``--at + 1`` swapped (a causal
violation too: the later depends on the earlier). The properties: the order properties,
causal order, latency and real-time latency with a bound of 0.1 s (above every delay of
the generated trace: the bound holds, measured across the cut).

    python bench/stream_cut_deps_bench.py [--messages 200000] [--at 1000] [--seed 1]
    python bench/stream_cut_deps_bench.py --views [--messages 50000] [--at 32768]

``--views``: bench/stream_views_bench.py's run with views instead (a view change every
20,000 messages, a member crashing every tenth view and joining at the next), with the
same deps, broken the same way after positions retired (each process's retired prefix
carried over), and view agreement, view sequence, same-view and sending-view delivery
and virtual synchrony checked too.

Prints, per run, wall and CPU seconds, peak memory, how the trace was decided, and the
verdicts (which must be the same for "now" and "before").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

#: the bound (seconds): above every delay of the generated trace
BOUND = 0.1
#: the properties the cut serves that read deps or times, with the order properties
PROPS = ("integrity", "total-order-weak", "total-order-strong", "global-order",
         "prefix-order", "fifo-order", "causal-order", "latency", "realtime-latency")
#: with views, the view properties too
VIEW_PROPS = ("view-agreement", "view-sequence", "same-view-delivery",
              "sending-view-delivery", "virtual-synchrony")
#: the cut's properties before this work (the code before: causal order and latency
#: kept the held path)
BEFORE = frozenset({"integrity", "total-order-weak", "total-order-strong",
                    "global-order", "prefix-order", "fifo-order", "view-agreement",
                    "view-sequence", "same-view-delivery", "sending-view-delivery",
                    "virtual-synchrony"})


def make(path: Path, n: int, seed: int, swap_at: int | None, views: bool) -> None:
    """bench/stream_bench.py's long trace (or bench/stream_views_bench.py's, with views),
    with each send depending on the message before."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if views:
        from stream_views_bench import view_run_tables

        tables = view_run_tables(n, 8, seed=seed, swap=swap_at)
    else:
        tables = long_trace_tables(n, n_processes=8, seed=seed, swap_at=swap_at)
    with TraceWriter(path) as w:
        for t in tables:
            kind = np.asarray(t.column("kind").to_numpy(zero_copy_only=False)) == "send"
            msgi = np.asarray(pc.cast(pc.utf8_slice_codeunits(t.column("msg"), 1),
                                      pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))
            has = kind & (msgi > 0)
            offsets = np.concatenate(([0], np.cumsum(has))).astype(np.int32)
            flat = pa.array(np.char.add("m", (msgi[has] - 1).astype(str)))
            deps = pa.ListArray.from_arrays(pa.array(offsets), flat,
                                            mask=pa.array(~kind))
            i = t.column_names.index("deps")
            w.write_table(t.set_column(i, t.schema.field(i), deps))


def child(mode: str, path: str, views: bool) -> None:
    import tomkit.checker.stream.narrow as narrow
    from tomkit.checker.properties import Options, properties
    from tomkit.checker.stream.driver import _Run, check_stream

    if mode == "before":
        narrow.NARROWED = BEFORE
    props = [properties()[n] for n in PROPS + (VIEW_PROPS if views else ())]
    options = Options(latency_bound=BOUND)
    t0 = time.perf_counter()
    run = _Run(props, options, False)
    report = check_stream([path], props, options, run=run)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    o = report.outcomes[0]
    print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": ru.ru_utime + ru.ru_stime,
                      "rss_mb": ru.ru_maxrss / 1024, "modes": dict(run.modes),
                      "verdicts": {k: str(v) for k, v in o.verdicts.items()},
                      "witness": {k: r.explanation for k, r in o.results.items()}}))


def measure(mode: str, path: Path, views: bool) -> dict:
    cmd = ["nice", "-n", "10", sys.executable, str(Path(__file__).resolve()),
           "--child", mode, str(path)] + (["--views"] if views else [])
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    fig = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"  {mode:<7} {path.name:<40} {fig['seconds']:7.1f} s {fig['cpu']:7.1f} s CPU "
          f"{fig['rss_mb']:6.0f} MB  {fig['modes']}", flush=True)
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--views", action="store_true", help="a run with views (above)")
    ap.add_argument("--messages", type=int, default=None,
                    help="default 200,000; with --views, 50,000")
    ap.add_argument("--at", type=int, default=None,
                    help="default 1,000; with --views, 32,768 (after positions retired)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="out/bench-cut-deps")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--make", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.make:
        path, n, seed, swap = args.make
        make(Path(path), int(n), int(seed), None if int(swap) < 0 else int(swap), args.views)
        return 0
    if args.child:
        child(*args.child, args.views)
        return 0
    n = args.messages or (50_000 if args.views else 200_000)
    at = args.at or (32_768 if args.views else 1000)
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    kind = "views" if args.views else "deps"
    clean = d / f"{kind}-8x{n}-{args.seed}.parquet"
    broken = d / f"{kind}-8x{n}-{args.seed}-swap{at}.parquet"
    for path, swap in ((clean, None), (broken, at)):
        if not path.exists():  # made by a child: a parent's peak memory counts in its own
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--make",
                            str(path), str(n), str(args.seed), str(swap or -1)]
                           + (["--views"] if args.views else []), check=True)
    print(f"seed {args.seed}, {n} messages x 8 processes ({kind}), deps and a latency "
          f"bound of {BOUND} s; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f}")
    figs = {"clean": measure("now", clean, args.views),
            "now": measure("now", broken, args.views),
            "before": measure("before", broken, args.views)}
    assert figs["now"]["verdicts"] == figs["before"]["verdicts"], figs
    assert figs["now"]["witness"] == figs["before"]["witness"], figs
    assert {"slow", "narrowed"} <= set(figs["now"]["modes"]), figs["now"]
    c = figs["clean"]
    for k in ("now", "before"):
        f = figs[k]
        print(f"  {k}: {f['cpu'] / c['cpu']:.2f}x the clean trace's CPU, "
              f"{f['rss_mb'] / c['rss_mb']:.2f}x its peak memory")
    print("  violated:", sorted(k for k, v in figs["now"]["verdicts"].items()
                                if v == "violated"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
