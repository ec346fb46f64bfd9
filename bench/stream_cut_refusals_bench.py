"""The cut's refusals lifted (checker/stream/narrow.py's ``Heads``): a long trace broken
early in which one process first appears after the breach, cut against refused, and
against the same trace clean (p7 from the start, no swap) and with p7 late but no swap
(itself a breach: p7's first delivery is not S[0]), each run its own niced process,
same files, same session.

The trace is bench/stream_bench.py's (traces/long_trace.py: 8 processes, every process
delivering every message, times on every record), with p7 first appearing at message
``--late``: its deliveries before are dropped and its sends before are p6's (a late
joiner without views, as a process whose log starts late). The breach: p0's deliveries
``--at`` and ``--at + 1`` swapped. The properties: what ``tomkit check --liveness`` asks
(integrity, weak, strong and global order, agreement, validity, liveness) and prefix
order and FIFO (p7's late start breaks both, and agreement).

"refused" is the same code with ``Heads`` finding no count: every cut short of p7's own
first deliveries leaves p7 out of the exact checks, and is refused; the cut taken, if
any, holds most of the run. ``--before PYTHON`` runs the broken trace once more with
another interpreter, a worktree's at the code before this step (which also refused
every cut where p7's FIFO scan breaks at another sender than the one it skipped: the
held path, every held record).

    python bench/stream_cut_refusals_bench.py [--messages 200000] [--at 1000]
        [--late 5000] [--seed 1] [--before /path/to/other/.venv/bin/python]

``--silent``: bench/stream_views_bench.py's run with views instead (8 processes, a view
change every 20,000 messages, a member crashing every tenth view and joining at the
next) and a ninth process, p8, which installs no view and delivers messages 0 to 5
only, in "no view" (a breach of same-view delivery at once): silent in the tail, with
views (cutowed.py, "A process silent in the tail"); the swap the same; the view
properties and member liveness asked too. There "before" (the code before this step)
refused every cut (condition A with views) and checked every held record.

    python bench/stream_cut_refusals_bench.py --silent [--messages 200000]
        [--before /path/to/other/.venv/bin/python]

Prints, per run, wall and CPU seconds, peak memory, how the trace was decided, the
records the exact checks read, and the verdicts (which must be the same for "cut" and
"refused").
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

#: what the runs ask
PROPS = ("integrity", "total-order-weak", "total-order-strong", "global-order",
         "prefix-order", "fifo-order", "agreement", "validity", "liveness")
#: with ``--silent``, the view properties and member liveness too
VIEW_PROPS = ("view-agreement", "view-sequence", "same-view-delivery",
              "sending-view-delivery", "virtual-synchrony", "member-liveness")
#: with ``--silent``, the last message p8 delivers
SILENT = 5


def make_silent(path: Path, n: int, seed: int, swap_at: int | None) -> None:
    """bench/stream_views_bench.py's run with p8 delivering messages 0 to ``SILENT`` in no
    view, each right after p0's delivery of it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from stream_views_bench import view_run_tables

    from tomkit.traces.writer import TraceWriter

    with TraceWriter(path) as w:
        for b, t in enumerate(view_run_tables(n, 8, seed=seed, swap=swap_at)):
            if b == 0:
                mine = pc.and_(pc.and_(pc.equal(t.column("process"), "p0"),
                                       pc.equal(t.column("kind"), "deliver")),
                               pc.is_in(t.column("msg"), pa.array(
                                   [f"m{j}" for j in range(SILENT + 1)])))
                extra = t.filter(mine)
                i = t.column_names.index("process")
                extra = extra.set_column(i, t.schema.field(i),
                                         pa.array(["p8"] * len(extra), pa.string()))
                i = t.column_names.index("time")
                extra = extra.set_column(i, t.schema.field(i),
                                         pc.add(extra.column("time"), 0.001))
                t = pa.concat_tables([t, extra]).sort_by("time")
            w.write_table(t)


def make(path: Path, n: int, seed: int, swap_at: int | None, late: int) -> None:
    """bench/stream_bench.py's long trace, p7 first appearing at message ``late``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    with TraceWriter(path) as w:
        for t in long_trace_tables(n, n_processes=8, seed=seed, swap_at=swap_at):
            msgi = np.asarray(pc.cast(pc.utf8_slice_codeunits(t.column("msg"), 1),
                                      pa.int64()).to_numpy(zero_copy_only=False))
            p7 = np.asarray(pc.equal(t.column("process"), "p7").to_numpy(
                zero_copy_only=False), bool)
            send = np.asarray(pc.equal(t.column("kind"), "send").to_numpy(
                zero_copy_only=False), bool)
            early = p7 & (msgi < late)
            i = t.column_names.index("process")
            proc = pc.if_else(pa.array(early & send), "p6", t.column("process"))
            t = t.set_column(i, t.schema.field(i), proc.cast(pa.string()))
            w.write_table(t.filter(pa.array(~(early & ~send))))


def child(mode: str, path: str, silent: bool = False) -> None:
    import tomkit.checker.stream.narrow as narrow
    import tomkit.checker.stream.reduced as reduced
    from tomkit.checker.properties import Options, properties
    from tomkit.checker.stream.driver import _Run, check_stream

    if mode == "refused":
        narrow.Heads.reached = lambda self, tally: 0
    read: list[int] = []
    decide = reduced.decide_chunk

    def counted(pieces, *a, **k):
        read.append(sum(p.table.num_rows for p in pieces))
        return decide(pieces, *a, **k)

    reduced.decide_chunk = counted
    props = [properties()[n] for n in PROPS + (VIEW_PROPS if silent else ())]
    t0 = time.perf_counter()
    run = _Run(props, Options(), False)
    report = check_stream([path], props, Options(), run=run)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    o = report.outcomes[0]
    print(json.dumps({"seconds": time.perf_counter() - t0, "cpu": ru.ru_utime + ru.ru_stime,
                      "rss_mb": ru.ru_maxrss / 1024, "modes": dict(run.modes),
                      "read": read[-1] if read else 0,
                      "verdicts": {k: str(v) for k, v in o.verdicts.items()},
                      "witness": {k: r.explanation for k, r in o.results.items()}}))


def measure(mode: str, path: Path, python: str | None = None, silent: bool = False) -> dict:
    cmd = ["nice", "-n", "10", python or sys.executable, str(Path(__file__).resolve()),
           "--child", mode, str(path)] + (["--silent"] if silent else [])
    # another tree's interpreter (--before) writes no bytecode into that tree
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    res = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    fig = json.loads(res.stdout.strip().splitlines()[-1])
    mode = "before" if python else mode
    print(f"  {mode:<8} {path.name:<36} {fig['seconds']:7.1f} s {fig['cpu']:7.1f} s CPU "
          f"{fig['rss_mb']:6.0f} MB  exact checks read {fig['read']:,} records  "
          f"{fig['modes']}", flush=True)
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--at", type=int, default=1000)
    ap.add_argument("--late", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="out/bench-cut-refusals")
    ap.add_argument("--before", default=None, metavar="PYTHON",
                    help="also run the broken trace with this interpreter (a worktree's "
                         "at the code before this step)")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--silent", action="store_true", help="a silent process with views")
    ap.add_argument("--make", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.make:
        path, n, seed, swap, late = args.make
        swap_at = None if int(swap) < 0 else int(swap)
        if args.silent:
            make_silent(Path(path), int(n), int(seed), swap_at)
        else:
            make(Path(path), int(n), int(seed), swap_at, int(late))
        return 0
    if args.child:
        child(*args.child, args.silent)
        return 0
    if args.silent:
        return silent_runs(args)
    n, d = args.messages, Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    clean = d / f"late0-8x{n}-{args.seed}.parquet"
    late = d / f"late{args.late}-8x{n}-{args.seed}.parquet"
    broken = d / f"late{args.late}-8x{n}-{args.seed}-swap{args.at}.parquet"
    for path, swap, first in ((clean, None, 0), (late, None, args.late),
                              (broken, args.at, args.late)):
        if not path.exists():  # made by a child: a parent's peak memory counts in its own
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--make",
                            str(path), str(n), str(args.seed), str(-1 if swap is None else swap),
                            str(first)], check=True)
    print(f"seed {args.seed}, {n} messages x 8 processes, p7 first seen at message "
          f"{args.late}, p0's deliveries {args.at} and {args.at + 1} swapped; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f}")
    figs = {"clean": measure("cut", clean), "late": measure("cut", late),
            "cut": measure("cut", broken), "refused": measure("refused", broken)}
    if args.before:
        figs["before"] = measure("cut", broken, args.before)
    assert figs["cut"]["verdicts"] == figs["refused"]["verdicts"], figs
    assert figs["cut"]["witness"] == figs["refused"]["witness"], figs
    if "before" in figs:
        assert figs["before"]["verdicts"] == figs["cut"]["verdicts"], figs
        assert figs["before"]["witness"] == figs["cut"]["witness"], figs
    assert {"slow", "narrowed"} <= set(figs["cut"]["modes"]), figs["cut"]
    c = figs["clean"]
    for k in ("late", "cut", "refused", "before"):
        if k not in figs:
            continue
        f = figs[k]
        print(f"  {k}: {f['cpu'] / c['cpu']:.2f}x the clean trace's CPU, "
              f"{f['rss_mb'] / c['rss_mb']:.2f}x its peak memory")
    print("  violated:", sorted(k for k, v in figs["cut"]["verdicts"].items()
                                if v == "violated"))
    return 0


def silent_runs(args: argparse.Namespace) -> int:
    """The ``--silent`` case: its trace clean (no p8, no swap), with p8 and the swap, cut,
    and by ``--before``."""
    n, d = args.messages, Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    broken = d / f"silent-8x{n}-{args.seed}-swap{args.at}.parquet"
    if not broken.exists():
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--silent", "--make",
                        str(broken), str(n), str(args.seed), str(args.at), "0"], check=True)
    print(f"seed {args.seed}, {n} messages x 8 processes with views, p8 silent after "
          f"message {SILENT}, p0's deliveries {args.at} and {args.at + 1} swapped; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f}")
    figs = {"cut": measure("cut", broken, silent=True)}
    if args.before:
        figs["before"] = measure("cut", broken, args.before, silent=True)
        assert figs["before"]["verdicts"] == figs["cut"]["verdicts"], figs
        assert figs["before"]["witness"] == figs["cut"]["witness"], figs
        c, b = figs["cut"], figs["before"]
        print(f"  cut: {c['cpu'] / b['cpu']:.2f}x before's CPU, "
              f"{c['rss_mb'] / b['rss_mb']:.2f}x its peak memory")
    assert {"slow", "narrowed"} <= set(figs["cut"]["modes"]), figs["cut"]
    print("  violated:", sorted(k for k, v in figs["cut"]["verdicts"].items()
                                if v == "violated"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
