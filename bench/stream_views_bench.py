"""Benchmark of the single pass on one long trace with views (issue 27): the end-of-trace
properties (``--liveness``) and the view properties decided in the pass, against the
whole-trace engine, on a run shaped as a view-synchronous recorder logs one.

The trace (``view_run_tables``): ``--processes`` processes, ``--messages`` messages, a
view change every ``--view-every`` messages (each member installs the next view after
delivering all of the last one, as JGroups with FLUSH and Corosync do); every tenth view
change one member crashes and is left out, and at the next one it joins again (a
``join`` record, then the view). Within a view each message is sent by one member and
delivered by every member a few rounds later (each process its own lag). The broken
form: one process stops delivering part way through the last view (agreement, validity,
liveness and member liveness violated, each witness in that view). The two breached
forms: p0's deliveries of two adjacent messages swapped, near the end of the run
(``broken late``) and near its start (``broken early``): weak, strong, prefix and global
order violated. A broken trace with views is decided on its held records, each
process's retired prefix carried over (checker/stream/viewheld.py), so these are
checked with the default properties (the end-of-trace ones still read a broken trace
whole).

Each check runs in its own process (its peak memory, ru_maxrss, is its own): ``tomkit
check --stream --liveness -p member-liveness`` (with the default properties) and the
whole-trace engine (the same without ``--stream``), on the clean and the stalled trace;
``tomkit check --stream`` with the default properties on the clean trace and the two
breached ones (and the whole-trace engine on them, unless ``--stream-only``). The early
breach's trace is ``--early-messages`` long: broken at its start, it holds every record
after the breach, whose exact checks cost what the whole-trace engine costs.
``--grouped-only`` checks the clean run with its records grouped by process (every member
sends), ``--messages`` long and twice that (or each of ``--sizes``), with the lag read
from disk and the sends awaited, as before a process first seen in a reader's batch was
fed from its first record (``--no-first-seen``: it held the low watermark from the
batch's start, checker/stream/driver.py), and as before the lag (the window holding what
a process not yet seen has to deliver, and waiting for the sends; up to 400,000
messages, as it holds every record): CPU, peak memory, records and positions held at
most.
Machines here are noisy: the figures to read are the CPU seconds and the same-run ratios.

    python bench/stream_views_bench.py [--messages 500000] [--dir out/bench-stream-views]

``--smoke`` is the tiny form tests/bench/ runs. ``--retired-only`` measures member
liveness on the run broken late whose last process, a member from the start, skipped
the first view (``retired``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

LAG = 4  # the most rounds a member's delivery of a message trails its send


def view_run_tables(n_messages: int, n_processes: int = 8, view_every: int = 20_000,
                    seed: int = 1, stall: int | None = None,
                    trace_id: str = "views", swap: int | None = None,
                    skip: bool = False) -> Iterator[pa.Table]:
    """One table (ARROW_SCHEMA) per view of the run in the module docstring; ``stall``:
    the last process stops delivering after that many deliveries of the last view;
    ``swap``: p0 delivers message ``swap + 1`` before ``swap`` (one view holds both);
    ``skip``: the last process is no member of the first view (it logs nothing there and
    no join: a member from the start that skipped a view, as JGroups' late joiner)."""
    from tomkit.traces.schema import ARROW_SCHEMA

    rng = np.random.default_rng(seed)
    names = [f"p{i}" for i in range(n_processes)]
    out_now: int | None = None  # the crashed member left out of this view
    k, v, t = 0, 0, 0.0
    while k < n_messages:
        v += 1
        rejoin = out_now
        out_now = int(rng.integers(n_processes)) if v % 10 == 0 else None
        absent = n_processes - 1 if skip and v == 1 else out_now
        members = [p for i, p in enumerate(names) if i != absent]
        rows: list[tuple] = []  # (time, process, kind, msg, view, members)
        if out_now is not None:
            rows.append((t, names[out_now], "crash", None, None, None))
        if rejoin is not None:
            rows.append((t, names[rejoin], "join", None, None, None))
        rows += [(t + 1e-6, p, "view", None, str(v), members) for p in members]
        n = min(view_every, n_messages - k)
        who = np.flatnonzero([i != absent for i in range(n_processes)])
        senders = who[rng.integers(len(who), size=n)]
        lag = {p: int(rng.integers(0, LAG + 1)) for p in who.tolist()}
        base = t + 1.0
        rows += [(base + j, names[s], "send", f"m{k + j}", None, None)
                 for j, s in enumerate(senders.tolist())]
        last = n if stall is None or k + n < n_messages else stall
        for p in who.tolist():
            upto = last if p == n_processes - 1 else n
            msgs = [f"m{k + j}" for j in range(upto)]
            if p == 0 and swap is not None and k <= swap and swap + 1 < k + upto:
                a = swap - k
                msgs[a], msgs[a + 1] = msgs[a + 1], msgs[a]
            rows += [(base + j + lag[p] + 0.5 + 0.01 * p, names[p], "deliver", msgs[j],
                      None, None) for j in range(upto)]
        rows.sort(key=lambda r: r[0])
        t = base + n + LAG + 1
        k += n
        cols = list(zip(*rows))
        size = len(rows)
        yield pa.Table.from_arrays([
            pa.array(np.full(size, trace_id), pa.string()),
            pa.array(cols[1], pa.string()), pa.array(cols[2], pa.string()),
            pa.array(cols[3], pa.string()), pa.nulls(size, pa.list_(pa.string())),
            pa.array(cols[4], pa.string()), pa.array(cols[5], pa.list_(pa.string())),
            pa.array(cols[0], pa.float64()), pa.nulls(size, pa.int64()),
            pa.nulls(size, pa.float64()),
        ], schema=ARROW_SCHEMA)


def make(path: Path, messages: int, processes: int, view_every: int, seed: int,
         stall: int | None = None, swap: int | None = None, skip: bool = False) -> None:
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)
    with TraceWriter(tmp) as w:
        for table in view_run_tables(messages, processes, view_every, seed, stall,
                                     swap=swap, skip=skip):
            w.write_table(table)
    tmp.rename(path)


def make_grouped(path: Path, messages: int, processes: int, view_every: int,
                 seed: int) -> None:
    """The clean run with its records grouped by process (each process's records in its
    order, p0's first), made a view at a time: each process's rows go to a file of its
    own, then the files one after the other into ``path`` (the run is never whole in
    memory: a child's peak memory would count this process's)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    names = [f"p{i}" for i in range(processes)]
    parts = [path.with_name(f"tmp-{p}-{path.name}") for p in names]
    writers = [TraceWriter(x) for x in parts]
    try:
        for table in view_run_tables(messages, processes, view_every, seed):
            for p, w in zip(names, writers):
                mine = table.filter(pc.equal(table.column("process"), p))
                if mine.num_rows:
                    w.write_table(mine)
    finally:
        for w in writers:
            w.close()
    tmp = path.with_name("tmp-" + path.name)
    with TraceWriter(tmp) as out:
        for x in parts:
            f = pq.ParquetFile(x)
            for g in range(f.num_row_groups):
                out.write_table(f.read_row_group(g))
            x.unlink()
    tmp.rename(path)


def child(kind: str, path: str, trim: int | None, safety: bool = False,
          no_cut: bool = False, end: bool = False, no_owed: bool = False,
          no_view_lag: bool = False, no_first_seen: bool = False,
          no_prefix: bool = False) -> None:
    """One measured run, in this process: its figures as one JSON line."""
    import tomkit.checker.stream.canon as canon
    import tomkit.checker.stream.driver as driver
    import tomkit.checker.stream.reduced as reduced
    from tomkit.checker.check_run import plan
    from tomkit.checker.engine import check_paths
    from tomkit.checker.properties import Options, properties
    from tomkit.checker.stream.driver import _Run, check_stream

    t0 = time.perf_counter()
    if trim:
        canon.TRIM_AT = trim
    if no_view_lag:  # as before: with views, unseen and lagging processes hold the low
        canon.VIEW_LAG = False  # watermark, and the window waits for the sends
    if no_first_seen:  # as before: a process first seen in a batch holds the low
        driver.FIRST_SEEN = False  # watermark from the batch's start
    if no_cut:  # as before viewcut.py: the exact checks on every held record
        reduced.narrowed = lambda *a: None
        driver.follow = lambda *a: None
    if no_owed:  # as before cutowed.py: the end-of-trace properties keep every record
        import tomkit.checker.stream.narrow as narrow
        narrow.OWED = frozenset()
    if no_prefix:  # as before prefixowed.py: member liveness's retired pairs, whole
        from stream_bench import before_prefixowed  # bench/, the script's folder

        before_prefixowed()
    checked: list[int] = []
    exact = reduced.decide_chunk

    def counted(pieces, *a, **k):  # the records the exact checks read
        checked.append(sum(p.table.num_rows for p in pieces))
        return exact(pieces, *a, **k)

    reduced.decide_chunk = counted
    props = plan(Options()).properties if safety else \
        plan(Options(), liveness=True).properties if end else \
        plan(Options(), liveness=True).properties + [properties()["member-liveness"]]
    out: dict = {}
    if kind == "stream":
        run = _Run(props, Options(), False)
        report = check_stream([path], props, Options(), run=run)
        out = {"modes": dict(run.modes), "whole": len(run.whole), "held": run.peak_held,
               "window": run.peak_window, "checked": max(checked, default=0)}
    else:
        report = check_paths([path], props, Options())
    out |= {"exit": report.exit_code(), "events": sum(o.events for o in report.outcomes),
            "verdicts": {o.trace: {k: str(v) for k, v in o.verdicts.items()}
                         for o in report.outcomes},
            "results": {o.trace: {k: r.to_dict() for k, r in o.results.items()}
                        for o in report.outcomes}}
    out["seconds"] = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)
    out["rss_mb"] = use.ru_maxrss / 1024
    out["cpu"] = use.ru_utime + use.ru_stime
    print(json.dumps(out), flush=True)


def measure(kind: str, path: Path, trim: int | None, safety: bool = False,
            no_cut: bool = False, end: bool = False, no_owed: bool = False,
            no_view_lag: bool = False, no_first_seen: bool = False,
            no_prefix: bool = False, timeout: float | None = None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, str(path)]
    if no_first_seen:
        cmd += ["--no-first-seen"]
    if no_prefix:
        cmd += ["--no-prefix"]
    if end:
        cmd += ["--end"]
    if no_owed:
        cmd += ["--no-owed"]
    if trim:
        cmd += ["--trim", str(trim)]
    if safety:
        cmd += ["--safety"]
    if no_cut:
        cmd += ["--no-cut"]
    if no_view_lag:
        cmd += ["--no-view-lag"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {kind} {path.name}: stopped after {timeout:.0f} s of wall time",
              flush=True)
        return {}
    fig = json.loads(res.stdout.strip().splitlines()[-1])
    label = f"{kind} {path.name}" + (" (default properties)" if safety else "") + \
        (" (--liveness)" if end else "") + (", not cut" if no_cut or no_owed else "") + \
        (", as before (--no-view-lag)" if no_view_lag else "") + \
        (", as before (--no-first-seen)" if no_first_seen else "") + \
        (", as before (--no-prefix: whole)" if no_prefix else "")
    print(f"  {label:<70} {fig['seconds']:8.2f} s {fig['cpu']:8.2f} s CPU "
          f"{fig['rss_mb']:7.0f} MB", flush=True)
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="the single pass on one long trace with views")
    ap.add_argument("--messages", type=int, default=500_000)
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--view-every", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="out/bench-stream-views")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (tests/bench/)")
    ap.add_argument("--stream-only", action="store_true",
                    help="only the single pass (the whole-trace engine's exact checks of a "
                    "view trace take minutes a million events)")
    ap.add_argument("--early-messages", type=int, default=50_000,
                    help="the length of the trace breached near its start")
    ap.add_argument("--no-breach", action="store_true",
                    help="skip the breached traces (only the clean and stalled ones)")
    ap.add_argument("--early-only", action="store_true",
                    help="only the early breach: its clean trace, and the breached one cut "
                    "(viewcut.py) and not cut (as before)")
    ap.add_argument("--grouped-only", action="store_true",
                    help="only the clean run grouped by process (every process sends), "
                    "at --messages and twice that, with the lag read from disk and the "
                    "sends awaited, and as before (the window holding them)")
    ap.add_argument("--trim", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--no-view-lag", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-first-seen", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sizes", default=None,
                    help="with --grouped-only: the runs' message counts, comma-separated "
                    "(default: --messages and twice that)")
    ap.add_argument("--safety", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-cut", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--end", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-owed", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--liveness", action="store_true",
                    help="with --early-only: what --liveness asks (the defaults, agreement, "
                    "validity, liveness), across the cut and as before (cutowed.py)")
    ap.add_argument("--no-prefix", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--retired-only", action="store_true",
                    help="only the late breach with member liveness, a member from the "
                    "start skipping the first view: in the pass, and as before (whole) "
                    "on a run --before-messages long")
    ap.add_argument("--before-messages", type=int, default=20_000)
    ap.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.trim, args.safety, args.no_cut, args.end,
              args.no_owed, args.no_view_lag, args.no_first_seen, args.no_prefix)
        return 0
    if args.smoke:
        args.messages, args.view_every, args.trim = 3000, 200, 64
        args.early_messages = 1000
    n, np_, every = args.messages, args.processes, args.view_every
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    if args.early_only:
        early_cut(args, d)
        return 0
    if args.retired_only:
        retired(args, d)
        return 0
    if args.grouped_only:
        grouped(args, d)
        return 0
    clean = d / f"views-{np_}x{n}-v{every}-{args.seed}.parquet"
    stall = every // 2
    broken = d / f"views-{np_}x{n}-v{every}-{args.seed}-stall{stall}.parquet"
    print(f"stream_views_bench (seed {args.seed}): one trace of {np_} processes x {n:,} "
          f"messages, a view every {every:,} (crashes and joins), Parquet; the broken "
          f"one: p{np_ - 1} stalls in the last view", flush=True)
    make(clean, n, np_, every, args.seed)
    make(broken, n, np_, every, args.seed, stall)
    kinds = ("stream",) if args.stream_only else ("stream", "whole")
    figs = {(k, p.name): measure(k, p, args.trim) for p in (clean, broken) for k in kinds}
    print("\nsummary (ratios from this run; the default properties, --liveness and member "
          "liveness)")
    for path, want in ((clean, 0), (broken, 1)):
        s = figs[("stream", path.name)]
        assert s["exit"] == want and s["modes"] == {"fast": 1} and s["whole"] == 0, s
        w = figs.get(("whole", path.name))
        if w is not None:
            assert w["exit"] == want
            assert s["verdicts"] == w["verdicts"] and s["results"] == w["results"]
        bad = sorted(k for v in s["verdicts"].values() for k, x in v.items()
                     if x == "violated")
        print(f"  {path.name}: {s['events']:,} events, decided in the pass "
              f"(held at most {s['held']:,} records); violated: {', '.join(bad) or 'none'}")
        if w is None:
            print(f"    stream: peak memory {s['rss_mb']:.0f} MB, CPU {s['cpu']:.1f} s, "
                  f"wall {s['seconds']:.1f} s")
            continue
        print(f"    stream / whole: peak memory {s['rss_mb']:.0f} / {w['rss_mb']:.0f} MB "
              f"({w['rss_mb'] / s['rss_mb']:.1f}x less), CPU {s['cpu']:.1f} / "
              f"{w['cpu']:.1f} s ({w['cpu'] / s['cpu']:.2f}x), wall {s['seconds']:.1f} / "
              f"{w['seconds']:.1f} s")
    if not args.no_breach:
        breached(args, d, clean, kinds)
    return 0


def breached(args: argparse.Namespace, d: Path, clean: Path, kinds: tuple) -> None:
    """The two breaches (module docstring), each against the clean trace of its length,
    with the default properties: decided on the held records, the retired views carried."""
    n, np_, every = args.messages, args.processes, args.view_every
    early_n = min(args.early_messages, n)
    late = n - every // 4  # in the last view
    # early, but after the first positions retired (the window: canon.TRIM_AT, 16,384)
    early = min(early_n // 2, max(1000, 2 * (args.trim or 1 << 14)))
    early_clean = d / f"views-{np_}x{early_n}-v{every}-{args.seed}.parquet"
    cases = [(clean, d / f"views-{np_}x{n}-v{every}-{args.seed}-swap{late}.parquet", late,
              "broken late"),
             (early_clean, d / f"views-{np_}x{early_n}-v{every}-{args.seed}-swap{early}"
              ".parquet", early, "broken early")]
    print(f"\nbreached traces (p0 swaps two adjacent deliveries; default properties; the "
          f"early one {early_n:,} messages)", flush=True)
    for base, path, at, _ in cases:
        make(base, n if base == clean else early_n, np_, every, args.seed)
        make(path, n if base == clean else early_n, np_, every, args.seed, swap=at)
    figs = {}
    for base, path, _, _ in cases:
        for p in dict.fromkeys((base, path)):
            for k in kinds:
                if (k, p.name) not in figs:
                    figs[(k, p.name)] = measure(k, p, args.trim, safety=True)
    print("\nsummary of the breaches (ratios from this run)")
    for base, path, at, label in cases:
        c, s = figs[("stream", base.name)], figs[("stream", path.name)]
        assert c["exit"] == 0 and s["exit"] == 1 and s["whole"] == 0, s
        assert s["modes"].get("views carried", 0) == 1, s["modes"]
        w = figs.get(("whole", path.name))
        if w is not None:
            assert s["verdicts"] == w["verdicts"] and s["results"] == w["results"]
        bad = sorted(k for v in s["verdicts"].values() for k, x in v.items()
                     if x == "violated")
        cut = "on the cut (viewcut.py)" if s["modes"].get("narrowed") else "on every one"
        print(f"  {label} (p0 swaps m{at} and m{at + 1}): {s['events']:,} events, decided "
              f"in the pass, its held records (at most {s['held']:,}) checked {cut}: "
              f"{s['checked']:,} records; violated: {', '.join(bad)}")
        print(f"    against the clean trace: peak memory {s['rss_mb']:.0f} / "
              f"{c['rss_mb']:.0f} MB ({s['rss_mb'] / c['rss_mb']:.2f}x), CPU "
              f"{s['cpu']:.1f} / {c['cpu']:.1f} s ({s['cpu'] / c['cpu']:.2f}x), wall "
              f"{s['seconds']:.1f} / {c['seconds']:.1f} s")
        if w is not None:
            print(f"    the whole-trace engine on it: {w['rss_mb']:.0f} MB, CPU "
                  f"{w['cpu']:.1f} s, wall {w['seconds']:.1f} s")


def grouped(args: argparse.Namespace, d: Path) -> None:
    """The clean run grouped by process (every member sends), ``--messages`` long and
    twice that (or ``--sizes``), each checked with the default properties with the lag
    read from disk and the sends awaited, as before a newcomer in a batch was fed from its
    first record (``--no-first-seen``), and as before the lag (``--no-view-lag``: the
    window holds what a process not yet seen has to deliver, and waits for the sends; up
    to 400,000 messages), each in its own process."""
    np_, every = args.processes, args.view_every
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else \
        [args.messages, 2 * args.messages]
    print(f"\ngrouped by process (seed {args.seed}): {np_} processes, a view every "
          f"{every:,}, every member sending; default properties", flush=True)
    figs = {}
    for n in sizes:
        path = d / f"views-{np_}x{n}-v{every}-{args.seed}-grouped.parquet"
        make_grouped(path, n, np_, every, args.seed)
        figs[n, "now"] = measure("stream", path, args.trim, safety=True)
        figs[n, "batch"] = measure("stream", path, args.trim, safety=True,
                                   no_first_seen=True)
        if n <= 400_000:
            figs[n, "lag"] = measure("stream", path, args.trim, safety=True,
                                     no_view_lag=True)
    print("\nsummary of the grouped runs (ratios from this run): CPU, peak memory, held at "
          "most (records, positions)")
    label = {"now": "now", "batch": "a newcomer held its batch (before)",
             "lag": "no lag read from disk (before that)"}
    for n in sizes:
        now = figs[n, "now"]
        print(f"  {n:,} messages, {now['events']:,} events:")
        for how in ("now", "batch", "lag"):
            f = figs.get((n, how))
            if f is None:
                continue
            # every run holds; a run that went whole (the first process in the file
            # skipped a view: docs/stream.md) says so, and held what it held till then
            assert f["exit"] == 0 and f["verdicts"] == now["verdicts"], f
            mode = "in the pass" if f["modes"] == {"fast": 1} else "WHOLE"
            print(f"    {label[how]:<38} CPU {f['cpu']:6.1f} s ({f['cpu'] / now['cpu']:.2f}x)"
                  f"  peak {f['rss_mb']:6.0f} MB ({f['rss_mb'] / now['rss_mb']:.2f}x)  held "
                  f"{f['held']:>10,} records {f['window']:>9,} positions  {mode}")
    if len(sizes) > 1:
        a, b = figs[sizes[0], "now"], figs[sizes[-1], "now"]
        print(f"  {sizes[-1]:,} against {sizes[0]:,} messages: {b['rss_mb'] / a['rss_mb']:.2f}x "
              f"the peak memory, {b['cpu'] / a['cpu']:.2f}x the CPU time")


def early_cut(args: argparse.Namespace, d: Path) -> None:
    """The early breach alone (``--early-messages`` long): its clean trace, the breached
    one with the cut for traces with views and without it (``--no-cut``: every held
    record to the exact checks, as before viewcut.py), each in its own process."""
    n, np_, every = args.early_messages, args.processes, args.view_every
    at = min(n // 2, max(1000, 2 * (args.trim or 1 << 14)))
    clean = d / f"views-{np_}x{n}-v{every}-{args.seed}.parquet"
    path = d / f"views-{np_}x{n}-v{every}-{args.seed}-swap{at}.parquet"
    make(clean, n, np_, every, args.seed)
    make(path, n, np_, every, args.seed, swap=at)
    live = args.liveness
    print(f"early breach (seed {args.seed}): {np_} processes x {n:,} messages, a view "
          f"every {every:,}; p0 swaps m{at} and m{at + 1}; "
          f"{'--liveness' if live else 'default properties'}", flush=True)
    c = measure("stream", clean, args.trim, safety=not live, end=live)
    s = measure("stream", path, args.trim, safety=not live, end=live)
    b = measure("stream", path, args.trim, safety=not live, no_cut=not live, end=live,
                no_owed=live)
    assert c["exit"] == 0 and s["exit"] == 1 and b["exit"] == 1
    assert s["modes"] == {"slow": 1, "narrowed": 1, "views carried": 1}, s["modes"]
    assert "narrowed" not in b["modes"], b["modes"]
    assert s["verdicts"] == b["verdicts"] and s["results"] == b["results"]
    print(f"\nsummary (ratios from this run; {s['events']:,} events)")
    for label, f in (("clean", c), ("broken early, cut", s), ("broken early, not cut", b)):
        print(f"  {label:<24} CPU {f['cpu']:6.1f} s ({f['cpu'] / c['cpu']:.2f}x)  peak "
              f"{f['rss_mb']:6.0f} MB ({f['rss_mb'] / c['rss_mb']:.2f}x)  wall "
              f"{f['seconds']:6.1f} s  held at most {f['held']:,}, exact checks on "
              f"{f.get('checked', 0):,} records")


def retired(args: argparse.Namespace, d: Path) -> None:
    """Member liveness on a view run broken late (p0 swaps two messages a quarter view
    before its end) whose last process is a member from the start that skipped the first
    view (it owes that view's messages, which retired) and whose rejoining members
    missed the views they were out of: decided in the pass from each process's retired
    deliveries per view (checker/stream/prefixowed.py), against its clean form; and as
    before (``--no-prefix``: the whole-trace engine, after the pass) on one
    ``--before-messages`` long (stopped after 20 minutes)."""
    np_, every = args.processes, args.view_every
    print(f"member liveness after positions retired (seed {args.seed}): {np_} processes, "
          f"a view every {every:,} (twelve at least), p{np_ - 1} skipping the first; "
          "--liveness and member liveness", flush=True)
    sizes = dict.fromkeys((args.messages, min(args.before_messages, args.messages)))
    figs = {}
    for n in sizes:
        # twelve views at least: every tenth view a member crashes, so not the last one,
        # where p0 swaps two messages
        every = min(args.view_every, max(n // 12, 100))
        at = n - every // 4
        clean = d / f"views-{np_}x{n}-v{every}-{args.seed}-skip.parquet"
        path = d / f"views-{np_}x{n}-v{every}-{args.seed}-skip-swap{at}.parquet"
        make(clean, n, np_, every, args.seed, skip=True)
        make(path, n, np_, every, args.seed, swap=at, skip=True)
        # as before: the whole-trace engine reads a view trace as Python events (more than
        # 100x the pass's CPU time: docs/stream.md), run on the shorter run only
        figs[n] = (measure("stream", clean, args.trim), measure("stream", path, args.trim),
                   measure("stream", path, args.trim, no_prefix=True, timeout=1200)
                   if n <= args.before_messages else {})
    print("\nsummary (ratios from this run)")
    for n, (c, s, b) in figs.items():
        assert s["exit"] == 1 and s["whole"] == 0 and s["modes"]["views carried"] == 1, s
        bad = sorted(k for v in s["verdicts"].values() for k, x in v.items()
                     if x == "violated")
        print(f"  {s['events']:,} events ({n:,} messages): violated {', '.join(bad)}")
        print(f"    in the pass: CPU {s['cpu']:.1f} s ({s['cpu'] / c['cpu']:.2f}x the clean "
              f"run's {c['cpu']:.1f} s), peak {s['rss_mb']:.0f} MB "
              f"({s['rss_mb'] / c['rss_mb']:.2f}x its {c['rss_mb']:.0f} MB)")
        if not b:
            print("    as before (whole): " + ("not finished within 20 minutes"
                                                if n <= args.before_messages else "not run"))
            continue
        assert b["whole"] == 1 and s["verdicts"] == b["verdicts"] and \
            s["results"] == b["results"], b
        print(f"    as before (whole): CPU {b['cpu']:.1f} s, peak {b['rss_mb']:.0f} MB")


if __name__ == "__main__":
    raise SystemExit(main())
