"""Benchmark of the single-pass checker (checker/stream/, issue 27) on one long trace.

One trace of ``--processes`` processes and ``--messages`` messages (traces/long_trace.py;
8 x 2,000,000 = 18 M events by default, Parquet) is checked, each run in its own
process so that its peak memory (ru_maxrss) is its own:

- ``tomkit check --stream`` (the default properties: integrity, weak and strong total
  order, global order) on the clean trace, on one twice as long, and on the first
  with two adjacent deliveries of p0 swapped near its end (a late breach);
- the DuckDB SQL peer of bench/check_bench.py (the same core checks), on the clean trace;
- the same trace broken early (p0's deliveries 1,000 and 1,001 swapped), so that the
  single pass holds nearly all of it (spilled to disk, checker/stream/spill.py) and its
  exact checks run on the records around the breach (checker/stream/narrow.py); and a
  trace a tenth as long broken the same way, with that cut and without it (``--no-cut``,
  a hidden flag of the child: the exact checks on every held record, as before), each
  with its peak memory while the trace is read and in all;
- a trace grouped by process (one process's records, then the next's; one sender, as a
  fixed sequencer), so that every process but the first lags behind the retired prefix:
  with the retired sequence read back from disk (checker/stream/retired.py) and as
  before it, sent to the whole-trace engine (``--no-lag``, a hidden flag of the child);
  and the long trace (a tenth of it) grouped by process, where every process sends, with
  the positions waiting for their sends retired (checker/stream/canon.py) and with the
  window waiting for them (``--no-wait``, a hidden flag of the child: as before);
- ``--behind-only``: the grouped trace with its last process stopping after half of its
  deliveries, with agreement and validity beside the defaults (agreement violated behind
  the retired prefix; not liveness, whose exact check is quadratic in a sender's sends
  on this trace: docs/stream.md), decided in the pass with the witnesses read back
  from the retired sequence, and as before (``--no-witness``, a hidden flag of the
  child: the witnesses not kept, so the whole-trace engine decides); and the clean
  trace with and without the witnesses kept (their CPU and disk);
- ``--retired-only``: the trace a tenth as long, broken late (p0's deliveries swapped
  1,000 messages before its end), with ``--liveness``'s properties, where p7 crashes
  after 1,000 deliveries (its messages sent by p0), and where
  besides a process p8 that only sends (every 50th message from the 40,000th on: seen
  after positions retired, it delivers none of them): decided in the pass, each
  process's retired deliveries counted (checker/stream/prefixowed.py), and as before
  (``--no-prefix``, a hidden flag of the child: the whole-trace engine), with the clean
  trace for reference.
- ``--sender-only``: the trace a tenth as long, clean, where a process p8 of its own
  sends every 50th message from the first on and delivers nothing (a client: seen
  before the first trim, its cursor stays at 0), with the default properties: it no
  longer holds the low watermark (canon.py's ``SENDERS_PASS``), and as before
  (``--no-senders-pass``, a hidden flag of the child: it held every position), with the
  trace without it for reference; the positions and records held, CPU and peak memory.

Machines here are noisy, so only ratios measured in the same run count. Targets (issue
27): stream >= 3x the peer's speed, under 1 GB; twice the trace within 1.2x that memory;
the late breach within 1.5x the clean trace's time and memory; the early breach under
1 GB.

    python bench/stream_bench.py [--messages 2000000] [--dir /work/data] [--huge]
                                 [--targets-only]

``--huge`` adds one trace of 10^8 events (stream only); ``--targets-only`` runs the
issue's targets alone (not the grouped, small early-breach and delay runs). ``--smoke``
is the tiny form tests/bench/ runs.

``--latency-only`` checks the default properties and latency with a bound
(``--latency-bound``, a tenth of a second: above every delay of the clean trace) on the
clean trace, and on the same trace with one delivery of p1 made 5 s late near its end
(message ``messages - 1000``: a latency breach late), in the single pass; and both a
tenth as long, in the single pass and in the whole-trace engine (``tomkit check``
without ``--stream``). ``--python PATH`` runs the measured children with another
interpreter (another checkout's virtualenv: the code before a change, on the same
files).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: tomkit watch's poll in the delay run (seconds)
POLL = "0.05"


def make(path: Path, messages: int, processes: int, seed: int,
         swap_at: int | None = None) -> None:
    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)  # the same suffix: the same format
    with TraceWriter(tmp) as w:
        for table in long_trace_tables(messages, n_processes=processes, seed=seed,
                                       swap_at=swap_at):
            w.write_table(table)
    tmp.rename(path)


#: latency-only's bound (seconds): the clean trace's delays are at most DELAY_MAX (0.05 s)
#: plus the merge's ramp
LATENCY_BOUND = 0.1


def make_slow(path: Path, messages: int, processes: int, seed: int, at: int) -> None:
    """The long trace with p1's delivery of message ``at`` made 5 s late (its time only:
    the order of the records is the clean trace's)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)
    with TraceWriter(tmp) as w:
        for table in long_trace_tables(messages, n_processes=processes, seed=seed):
            hit = pc.and_(pc.and_(pc.equal(table.column("process"), "p1"),
                                  pc.equal(table.column("kind"), "deliver")),
                          pc.equal(table.column("msg"), f"m{at}"))
            rows = np.flatnonzero(np.asarray(hit))
            if len(rows):
                t = table.column("time").to_numpy().copy()
                t[rows] += 5.0
                i = table.column_names.index("time")
                table = table.set_column(i, "time", pa.array(t, pa.float64()))
            w.write_table(table)
    tmp.rename(path)


def make_repeat(path: Path, messages: int, processes: int, seed: int, at: int) -> None:
    """The trace of ``make`` with p0's delivery number ``at`` logged twice in a row (a
    repeat: p0's later deliveries are shifted by one for the rest of the run)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)
    seen = 0  # p0's deliveries written so far
    with TraceWriter(tmp) as w:
        for table in long_trace_tables(messages, n_processes=processes, seed=seed):
            mine = np.flatnonzero(np.asarray(pc.and_(
                pc.equal(table.column("process"), "p0"),
                pc.equal(table.column("kind"), "deliver"))))
            k = at - seen
            if 0 <= k < len(mine):
                r = int(mine[k])
                table = table.take(pa.array(np.insert(np.arange(table.num_rows), r + 1, r)))
            seen += len(mine)
            w.write_table(table)
    tmp.rename(path)


def make_grouped(path: Path, messages: int, processes: int, block: int = 100_000) -> None:
    """A clean trace grouped by process: p0 sends every message and delivers each as it
    sends it, then p1, p2, ... deliver them all, one process after the other."""
    import numpy as np
    import pyarrow as pa

    from tomkit.traces.long_trace import events_table
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)

    def table(proc: str, kind: np.ndarray, msgi: np.ndarray, time: np.ndarray) -> pa.Table:
        rows = len(msgi)
        return events_table(pa.array(np.full(rows, "grouped"), pa.string()),
                            pa.array(np.full(rows, proc), pa.string()),
                            pa.array(kind, pa.string()), msgi, time)

    with TraceWriter(tmp) as w:
        for p in range(processes):
            for lo in range(0, messages, block):
                m = np.arange(lo, min(messages, lo + block))
                if p == 0:
                    w.write_table(table("p0", np.tile(["send", "deliver"], len(m)),
                                        np.repeat(m, 2), np.repeat(m * 0.01, 2) +
                                        np.tile([0.0, 0.005], len(m))))
                else:
                    w.write_table(table(f"p{p}", np.full(len(m), "deliver"), m,
                                        m * 0.01 + 0.006 + 0.001 * p))
    tmp.rename(path)


def make_behind(path: Path, grouped: Path, processes: int) -> None:
    """The grouped trace of ``make_grouped`` with its last process's deliveries cut after
    the first half: that process stops behind the retired prefix. Read a row group at a
    time (a child's peak memory counts its parent's: ru_maxrss survives exec)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    last = f"p{processes - 1}"
    f = pq.ParquetFile(grouped)
    total = sum(int(pc.sum(pc.equal(b.column("process"), last)).as_py() or 0)
                for b in f.iter_batches(columns=["process"]))
    seen = 0
    tmp = path.with_name("tmp-" + path.name)
    with TraceWriter(tmp) as w:
        for b in f.iter_batches(batch_size=100_000):
            mine = np.asarray(pc.equal(b.column("process"), last))
            nth = seen + np.cumsum(mine) - 1  # the last process's row number
            seen += int(mine.sum())
            w.write_table(pa.Table.from_batches([b.filter(pa.array(~mine | (nth < total // 2)))]))
    tmp.rename(path)


def make_grouped_all(path: Path, messages: int, processes: int, seed: int,
                     swap_at: int | None = None) -> None:
    """The long trace with every process sending, its records grouped by process (each
    process's records in their order, one process after the other); ``swap_at``: the
    last process's deliveries number ``swap_at`` and the next swapped (its records come
    last, so the breach shows at a lagging delivery, after the sends were awaited)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)
    t = pa.concat_tables(list(long_trace_tables(messages, n_processes=processes,
                                                seed=seed)))
    if swap_at is not None:
        mine = pc.and_(pc.equal(t.column("process").cast(pa.string()), f"p{processes - 1}"),
                       pc.equal(t.column("kind").cast(pa.string()), "deliver"))
        rows = np.flatnonzero(np.asarray(mine))
        i, j = int(rows[swap_at]), int(rows[swap_at + 1])
        idx = np.arange(t.num_rows)
        idx[i], idx[j] = j, i
        t = t.set_column(t.column_names.index("msg"), "msg",
                         t.column("msg").take(pa.array(idx)))
    with TraceWriter(tmp) as w:
        for p in range(processes):
            w.write_table(t.filter(pc.equal(t.column("process"), f"p{p}")))
    tmp.rename(path)


def make_crash(path: Path, messages: int, processes: int, seed: int, swap_at: int,
               crash_at: int, behind_from: int | None = None) -> None:
    """The trace of ``make`` with p0's deliveries ``swap_at`` and ``swap_at + 1`` swapped,
    its last process crashing after ``crash_at`` deliveries (a crash record, its later
    deliveries dropped; its sends are p0's: a sender keeps its latest send held, and so
    the window from it on, canon.py), and from message ``behind_from`` on every 50th
    message sent by a process of its own that delivers nothing."""
    import numpy as np
    import pyarrow as pa

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    last = f"p{processes - 1}"
    tmp = path.with_name("tmp-" + path.name)
    seen, down = 0, False
    with TraceWriter(tmp) as w:
        for table in long_trace_tables(messages, n_processes=processes, seed=seed,
                                       swap_at=swap_at):
            proc = np.asarray(table.column("process").to_numpy(zero_copy_only=False),
                              object)
            kind = np.asarray(table.column("kind").to_numpy(zero_copy_only=False), object)
            mine = proc == last
            at = None  # the crash's row in this table
            gone = down  # from this table's start
            if not down:
                d = np.flatnonzero(mine & (kind == "deliver"))
                if crash_at - seen < len(d):
                    at, down = int(d[crash_at - seen]), True
                seen += len(d)
            keep = np.ones(len(proc), bool)
            proc[mine & (kind == "send")] = "p0"
            if gone or at is not None:
                keep[(np.arange(len(proc)) >= (at or 0)) & mine & (kind == "deliver")] = False
            if behind_from is not None:
                msg = table.column("msg").to_numpy(zero_copy_only=False)
                num = np.array([int(m[1:]) for m in msg], np.int64)
                proc[(kind == "send") & (num >= behind_from) & (num % 50 == 0)] = \
                    f"p{processes}"
            table = table.set_column(table.column_names.index("process"), "process",
                                     pa.array(proc, pa.string()))
            if at is not None:
                crash = table.slice(at, 1).to_pylist()[0] | {
                    "process": last, "kind": "crash", "msg": None}
                rows = np.flatnonzero(keep)
                cut = int(np.searchsorted(rows, at))
                table = pa.concat_tables([
                    table.take(pa.array(rows[:cut])),
                    pa.Table.from_pylist([crash], schema=table.schema),
                    table.take(pa.array(rows[cut:]))])
            else:
                table = table.filter(pa.array(keep))
            w.write_table(table)
    tmp.rename(path)



def before_prefixowed() -> None:
    """The single pass as before prefixowed.py, in this (child) process: a broken trace
    whose retired part some process delivered less of goes whole (the benches' "as
    before" rows; stream_views_bench.py's too)."""
    import tomkit.checker.stream.driver as driver
    import tomkit.checker.stream.reduced as reduced
    from tomkit.checker.stream.prefixowed import asked

    checks = driver.check_held

    def refused(st, props, *a, **k):
        if asked(st, props):
            raise reduced.NeedsWhole("the retired part, as before")
        return checks(st, props, *a, **k)

    driver.check_held = refused

def child(kind: str, path: str, trim: int | None, spill_rows: int | None = None,
          no_lag: bool = False, no_cut: bool = False, no_wait: bool = False,
          no_witness: bool = False, liveness: bool = False,
          bound: float | None = None, end: bool = False, no_owed: bool = False,
          no_prefix: bool = False, no_regroup: bool = False,
          no_senders_pass: bool = False) -> None:
    """One measured run, in this process: prints its figures as one JSON line."""
    t0 = time.perf_counter()
    out: dict = {}
    if kind == "whole":  # the whole-trace engine (tomkit check without --stream)
        from tomkit.checker.check_run import plan
        from tomkit.checker.engine import check_paths
        from tomkit.checker.properties import Options

        options = Options(latency_bound=bound)
        props = plan(options).properties
        report = check_paths([path], props, options)
        out = {"exit": report.exit_code(), "modes": {"whole": 1},
               "events": sum(o.events for o in report.outcomes),
               "violated": sorted(n for o in report.outcomes for n, r in o.results.items()
                                  if str(r.verdict) == "violated"),
               "latency": [r.to_dict() for o in report.outcomes
                           for n, r in o.results.items() if n == "latency"]}
    elif kind == "peer":
        spec = importlib.util.spec_from_file_location("check_bench", HERE / "check_bench.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        counts = mod.peer(Path(path), "parquet")
        out = {"violations": [int(x) for x in counts[0]]}
    else:
        import tomkit.checker.stream.canon as canon
        import tomkit.checker.stream.driver as driver
        import tomkit.checker.stream.reduced as reduced
        import tomkit.checker.stream.spill as spill
        from tomkit.checker.check_run import plan
        from tomkit.checker.properties import Options
        from tomkit.checker.stream.driver import _Run, check_stream

        if trim:
            canon.TRIM_AT = trim
        if spill_rows:
            spill.SPILL_ROWS = spill_rows
            # a buffer smaller than a read (the smoke's): reads of its size, so that the
            # records after a break spill, and are cut
            driver.READ_ROWS = min(driver.READ_ROWS, spill_rows)
        if no_senders_pass:  # as before: a process that only sends holds the watermark
            canon.SENDERS_PASS = False
        if no_wait:  # as before: the window waits at a message whose send is not read
            canon.AWAIT_SENDS = False
        if no_cut:  # as before narrow.py: the exact checks on every held record
            reduced.narrowed = lambda *a: None
            driver.follow = lambda *a: None
        if no_owed:  # as before cutowed.py: the end-of-trace properties keep every record
            import tomkit.checker.stream.narrow as narrow
            narrow.OWED = frozenset()
        if no_prefix:  # as before prefixowed.py: such a trace went whole
            before_prefixowed()
        import tomkit.checker.stream.regroup as regroup
        if no_regroup:  # as before regroup.py: a broken grouped trace goes whole
            regroup.REGROUP_ROWS = 1 << 62
        if no_lag:  # as before retired.py: a lagging process sends the trace whole
            canon.TraceState._lagging = lambda *a: "a process lags behind the retired prefix"
        if no_witness:  # as before the retired witnesses: hashes (and latency) only
            canon.TraceState._retire_witnesses = lambda self, gone: (None, None)
            canon.TraceState._retire_deliveries = lambda *a, **k: None
        close = canon.TraceState.close
        out["retired_mb"] = 0.0

        def close_and_weigh(self):  # the retired sequence's files on disk
            if self.past is not None:
                out["retired_mb"] = max(out["retired_mb"], self.past.disk() / 2 ** 20)
                out["retired_rows"] = max(out.get("retired_rows", 0), self.past.rows)
            close(self)

        canon.TraceState.close = close_and_weigh
        exact = driver.check_held

        def before_checks(*a, **k):  # the peak while the trace was read
            out.setdefault("read_mb",
                           resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            return exact(*a, **k)

        driver.check_held = before_checks
        feed = canon.TraceState.feed
        out["buffer_mb"] = 0.0

        def feed_and_weigh(self, piece):  # the held records' Arrow bytes in memory
            feed(self, piece)
            if self.mode != canon.FAST:
                size = sum(p.table.nbytes for p, _ in self.buffer) / 2 ** 20
                out["buffer_mb"] = max(out["buffer_mb"], size)

        canon.TraceState.feed = feed_and_weigh
        options = Options(latency_bound=bound)
        # --end: what tomkit check --liveness asks
        props = plan(options, properties=["integrity", "total-order-weak",
                                          "total-order-strong", "global-order",
                                          "agreement", "validity"] +
                     (["liveness"] if end else []) if liveness or end else None
                     ).properties
        run = _Run(props, options, False)
        report = check_stream([path], props, options, run=run)
        out |= {"exit": report.exit_code(), "modes": dict(run.modes),
               "whole": len(run.whole),
               "events": sum(o.events for o in report.outcomes),
               "held": run.peak_held, "window": run.peak_window,
               "violated": sorted(n for o in report.outcomes for n, r in o.results.items()
                                  if str(r.verdict) == "violated"),
               "latency": [r.to_dict() for o in report.outcomes
                           for n, r in o.results.items() if n == "latency"]}
    out["seconds"] = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)
    out["rss_mb"] = use.ru_maxrss / 1024
    # CPU seconds of every thread: on a machine shared with other jobs the wall time
    # measures the load as much as the check
    out["cpu"] = use.ru_utime + use.ru_stime
    print(json.dumps(out), flush=True)


#: the interpreter of the measured children (``--python``)
PYTHON = sys.executable


def measure(kind: str, path: Path, trim: int | None, spill_rows: int | None = None,
            label: str = "", no_lag: bool = False, no_cut: bool = False,
            no_wait: bool = False, no_witness: bool = False,
            liveness: bool = False, bound: float | None = None, end: bool = False,
            no_owed: bool = False, no_prefix: bool = False,
            no_regroup: bool = False, no_senders_pass: bool = False) -> dict:
    cmd = [PYTHON, str(Path(__file__).resolve()), "--child", kind, str(path)]
    if no_senders_pass:
        cmd += ["--no-senders-pass"]
    if no_regroup:
        cmd += ["--no-regroup"]
    if end:
        cmd += ["--end"]
    if no_prefix:
        cmd += ["--no-prefix"]
    if no_owed:
        cmd += ["--no-owed"]
    if bound is not None:
        cmd += ["--bound", str(bound)]
    if no_lag:
        cmd += ["--no-lag"]
    if no_cut:
        cmd += ["--no-cut"]
    if no_wait:
        cmd += ["--no-wait"]
    if no_witness:
        cmd += ["--no-witness"]
    if liveness:
        cmd += ["--liveness"]
    if trim:
        cmd += ["--trim", str(trim)]
    if spill_rows:
        cmd += ["--spill-rows", str(spill_rows)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    fig = json.loads(res.stdout.strip().splitlines()[-1])
    label = f"{kind} {path.name}{label}"
    read = f" (reading: {fig['read_mb']:.0f} MB; held in memory {fig['buffer_mb']:.0f} " \
        "MB)" if "read_mb" in fig else ""
    disk = f" (retired on disk: {fig['retired_mb']:.0f} MB)" if fig.get("retired_mb") else ""
    print(f"  {label:<44} {fig['seconds']:8.2f} s {fig['cpu']:8.2f} s CPU "
          f"{fig['rss_mb']:7.0f} MB{read}{disk}", flush=True)
    return fig


def certain_line(path: Path, swap_at: int) -> int:
    """The line of a generated JSON Lines trace that makes its planted swap certain: the
    later of p0's early delivery at position ``swap_at`` and the first other process's
    delivery at that position (the records before it do not show the breach)."""
    import numpy as np

    from tomkit.traces.reader import read_table

    t = read_table(path)
    proc = np.asarray(t.column("process").to_pylist())
    deliver = np.asarray(t.column("kind").to_pylist()) == "deliver"
    first_other = None
    for p in np.unique(proc):
        rows = np.flatnonzero(deliver & (proc == p))
        if p == "p0":
            mine = rows[swap_at]
        elif first_other is None or rows[swap_at] < first_other:
            first_other = rows[swap_at]
    return int(max(mine, first_other)) + 2  # 0-based row; line 1 is the header


def summary_events(path: Path) -> int:
    """The events tomkit watch had read at its latest summary line (0 before any)."""
    events = 0
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            events = json.loads(line).get("events", events)
    return events


def proc_cpu(pid: int) -> float | None:
    """User and system CPU seconds of a running process, all its threads (Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def delay(d: Path, rate: int, seconds: float, processes: int, seed: int) -> dict:
    """Part 4 of the issue: a JSON Lines log written at ``rate`` events/s with a breach
    after about two thirds of ``seconds``, followed by ``tomkit watch``: the time from
    the write of the line that makes the breach certain to its verdict line."""
    n = max(10, int(rate * seconds / (processes + 1)))
    swap_at = n * 2 // 3
    path = d / f"delay-{processes}x{n}-{seed}.jsonl"
    make(path, n, processes, seed, swap_at=swap_at)
    lines = path.read_bytes().splitlines(keepends=True)
    at = certain_line(path, swap_at)
    live, out = d / "delay-live.jsonl", d / "delay-verdicts.jsonl"
    summary = d / "delay-summary.jsonl"
    behind = None
    for f in (live, out):
        f.unlink(missing_ok=True)
    live.write_bytes(lines[0])  # the header
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    # a poll of 50 ms: at 50,000 events/s each cycle then reads a few thousand records,
    # where a numpy step per batch costs little per record (10 ms: five times the CPU)
    watch = subprocess.Popen([sys.executable, "-m", "tomkit", "watch", str(live), "--out",
                              str(out), "--format", "json", "--poll", POLL,
                              "--idle-exit", "6", "--summary-every", "0.1"],
                             stdout=subprocess.DEVNULL, stderr=open(summary, "w"))
    # its start-up, outside the measure; the idle exit (6 s) must not come before the
    # first write, whatever the start-up takes
    time.sleep(3)
    cpu_start = proc_cpu(watch.pid)  # its start-up, apart
    step = max(1, rate // 100)  # a write every 10 ms
    t_certain = seen = None
    cpu_seen = events_seen = None
    t0 = time.perf_counter()
    with open(live, "ab") as f:
        for k, i in enumerate(range(1, len(lines), step)):
            f.write(b"".join(lines[i:i + step]))
            f.flush()
            if t_certain is None and i + step > at - 1:
                t_certain = time.perf_counter()
                # how far watch was behind the writer then: its latest summary line
                behind = min(i + step, len(lines)) - 1 - summary_events(summary)
            if t_certain is not None and seen is None and out.exists() and out.stat().st_size:
                seen = time.perf_counter()
                cpu_seen, events_seen = proc_cpu(watch.pid), i + step - 1
            pause = t0 + (k + 1) * 0.01 - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
    written = time.perf_counter() - t0
    while seen is None and watch.poll() is None:  # a loaded machine: as long as it takes
        if out.exists() and out.stat().st_size:
            seen = time.perf_counter()
            cpu_seen, events_seen = proc_cpu(watch.pid), len(lines) - 1
        time.sleep(0.002)
    code = watch.wait(timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    first = json.loads(out.read_text().splitlines()[0])
    events = len(lines) - 1
    return {"events": events, "rate": events / written,
            "delay": None if seen is None else seen - t_certain, "exit": code,
            "cpu": cpu, "cpu_us": 1e6 * cpu / events,
            # CPU per event while following, up to the report (start-up and the final
            # report's exact checks of the broken trace left out)
            "follow_us": None if cpu_seen is None or cpu_start is None else
            1e6 * (cpu_seen - cpu_start) / events_seen,
            "load": (load0, os.getloadavg()[0]), "behind": behind,
            "first": f"{first['property']}: {first.get('explanation', '')}"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="single-pass checker benchmark")
    ap.add_argument("--messages", type=int, default=2_000_000)
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="out/bench-stream")
    ap.add_argument("--no-peer", action="store_true", help="skip the DuckDB peer")
    ap.add_argument("--huge", action="store_true", help="also one trace of 10^8 events")
    ap.add_argument("--rate", type=int, default=50_000,
                    help="events/s written to the log tomkit watch follows (delay)")
    ap.add_argument("--seconds", type=float, default=30.0,
                    help="how long that log is written (delay)")
    ap.add_argument("--delay-only", action="store_true",
                    help="only the delay of tomkit watch (part 4), not the long traces")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes and a tiny window, for the test")
    ap.add_argument("--trim", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--spill-rows", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--no-lag", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-cut", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-wait", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-witness", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--liveness", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--end", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-owed", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-prefix", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--retired-only", action="store_true",
                    help="only the late breach with a crash and a process behind, "
                    "--liveness's properties: in the pass and as before (whole)")
    ap.add_argument("--no-regroup", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-senders-pass", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sender-only", action="store_true",
                    help="only a trace with a process that only sends, now and as before")
    ap.add_argument("--grouped-broken-only", action="store_true",
                    help="only the trace grouped by process where every process sends (a "
                    "tenth as long), clean and broken early and late (regroup.py)")
    ap.add_argument("--owed-only", action="store_true",
                    help="only --liveness's properties on the early breach: across the cut "
                    "(cutowed.py), as before (every held record), and the clean trace")
    ap.add_argument("--targets-only", action="store_true",
                    help="only the issue's targets: clean, double, late and early breach, "
                    "the peer (and --huge); not the grouped, small early and delay runs")
    ap.add_argument("--behind-only", action="store_true",
                    help="only a process behind the retired prefix (the grouped trace, "
                    "its last process stopping halfway), in the pass and whole, and the "
                    "clean trace with and without the retired witnesses")
    ap.add_argument("--grouped-only", action="store_true",
                    help="only the trace grouped by process (a tenth as long)")
    ap.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--bound", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--latency-only", action="store_true",
                    help="a latency bound on the clean trace and a late latency breach")
    ap.add_argument("--latency-bound", type=float, default=LATENCY_BOUND)
    ap.add_argument("--python", default=None,
                    help="the measured children's interpreter (another checkout's venv)")
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.trim, args.spill_rows, args.no_lag,
              args.no_cut, args.no_wait, args.no_witness, args.liveness, args.bound,
              args.end, args.no_owed, args.no_prefix, args.no_regroup,
              args.no_senders_pass)
        return 0
    if args.python:
        global PYTHON
        PYTHON = args.python
    if args.latency_only:
        return latency_runs(args)
    if args.smoke:
        args.messages, args.processes, args.trim, args.seconds = 3000, 4, 256, 2.0
    if args.owed_only:
        return owed_runs(args)
    if args.retired_only:
        return retired_runs(args)
    if args.sender_only:
        return sender_only_runs(args)
    n, np_ = args.messages, args.processes
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    events = n * (np_ + 1)
    grouped = d / f"grouped-{np_}x{n // 6}.parquet"
    make_grouped(grouped, n // 6, np_)
    senders = d / f"grouped-senders-{np_}x{n // 10}-{args.seed}.parquet"
    if args.behind_only:
        behind = d / f"grouped-{np_}x{n // 6}-behind.parquet"
        make_behind(behind, grouped, np_)
        clean = d / f"long-{np_}x{n}-{args.seed}.parquet"
        make(clean, n, np_, args.seed)
        print_behind(measure("stream", behind, args.trim, label=", in the pass",
                             liveness=True),
                     measure("stream", behind, args.trim, label=", whole", liveness=True,
                             no_witness=True),
                     measure("stream", clean, args.trim, label=", witnesses kept"),
                     measure("stream", clean, args.trim, label=", witnesses off",
                             no_witness=True))
        return 0
    if args.grouped_only:
        print_grouped(measure("stream", grouped, args.trim, label=", lag read from disk"),
                      measure("stream", grouped, args.trim, label=", whole", no_lag=True))
        make_grouped_all(senders, n // 10, np_, args.seed)
        print_senders(measure("stream", senders, args.trim, label=", sends awaited"),
                      measure("stream", senders, args.trim, label=", window waits",
                              no_wait=True))
        return 0
    if args.grouped_broken_only:
        return grouped_broken_runs(senders, n // 10, np_, args)
    if args.delay_only:
        lag = delay(d, args.rate, args.seconds, np_, args.seed)
        print(f"stream_bench (seed {args.seed}): tomkit watch on {lag['events']:,} events "
              f"written at {lag['rate']:,.0f}/s: first verdict {lag['first'][:60]}")
        assert lag["exit"] == 1 and lag["delay"] is not None, lag
        print_delay(lag)
        return 0
    print(f"stream_bench (seed {args.seed}): one trace of {np_} processes x {n:,} messages "
          f"= {events:,} events, Parquet")
    clean = d / f"long-{np_}x{n}-{args.seed}.parquet"
    double = d / f"long-{np_}x{2 * n}-{args.seed}.parquet"
    swap_at = n - 1000 if n > 2000 else n // 2
    late = d / f"long-{np_}x{n}-{args.seed}-swap{swap_at}.parquet"
    print("generating (reused when present) ...", flush=True)
    make(clean, n, np_, args.seed)
    make(double, 2 * n, np_, args.seed)
    make(late, n, np_, args.seed, swap_at=swap_at)
    early_at = min(1000, n // 40)
    early = d / f"long-{np_}x{n}-{args.seed}-swap{early_at}.parquet"
    make(early, n, np_, args.seed, swap_at=early_at)
    small = d / f"long-{np_}x{n // 10}-{args.seed}-swap{early_at}.parquet"
    # the same breach as a repeat: p0 delivers its message number early_at twice, and is
    # shifted by one for the rest of the run (narrow.py's per-process cut)
    repeat = d / f"long-{np_}x{n}-{args.seed}-repeat{early_at}.parquet"
    make_repeat(repeat, n, np_, args.seed, early_at)
    small_repeat = d / f"long-{np_}x{n // 10}-{args.seed}-repeat{early_at}.parquet"
    # the spill's buffer: the default, or a few thousand records on the smoke's trace
    buffer = 200 if args.smoke else None
    figs = {}
    if not args.targets_only:
        make(small, n // 10, np_, args.seed, swap_at=early_at)
        figs["grouped"] = measure("stream", grouped, args.trim, label=", lag read from disk")
        figs["grouped-whole"] = measure("stream", grouped, args.trim, label=", whole",
                                        no_lag=True)
        make_grouped_all(senders, n // 10, np_, args.seed)
        figs["senders"] = measure("stream", senders, args.trim, label=", sends awaited")
        figs["senders-waiting"] = measure("stream", senders, args.trim,
                                          label=", window waits", no_wait=True)
        figs["small"] = measure("stream", small, args.trim, buffer, ", cut")
        figs["small-all"] = measure("stream", small, args.trim, buffer, ", not cut",
                                    no_cut=True)
        assert figs["small"]["violated"] == figs["small-all"]["violated"] != [], figs
        assert figs["small"]["modes"] == {"slow": 1, "narrowed": 1}, figs["small"]
        make_repeat(small_repeat, n // 10, np_, args.seed, early_at)
        figs["small-repeat"] = measure("stream", small_repeat, args.trim, buffer, ", cut")
        figs["small-repeat-all"] = measure("stream", small_repeat, args.trim, buffer,
                                           ", not cut", no_cut=True)
        assert figs["small-repeat"]["violated"] == figs["small-repeat-all"]["violated"] \
            == ["integrity"], figs
        assert figs["small-repeat"]["modes"] == {"slow": 1, "narrowed": 1}, figs
    figs |= {"clean": measure("stream", clean, args.trim),
             "double": measure("stream", double, args.trim),
             "late": measure("stream", late, args.trim),
             "early": measure("stream", early, args.trim, buffer, ", spilled and cut"),
             "repeat": measure("stream", repeat, args.trim, buffer, ", spilled and cut")}
    assert figs["repeat"]["violated"] == ["integrity"], figs["repeat"]
    assert figs["clean"]["exit"] == 0 and figs["double"]["exit"] == 0, figs
    assert figs["late"]["exit"] == 1 and figs["late"]["violated"], figs["late"]
    assert figs["early"]["violated"] == figs["late"]["violated"], figs
    if not args.no_peer:
        figs["peer"] = measure("peer", clean, None)
        assert figs["peer"]["violations"] == [0, 0, 0, 0], figs["peer"]
    if args.huge:
        m = -(-10 ** 8 // (np_ + 1))
        huge = d / f"long-{np_}x{m}-{args.seed}.parquet"
        make(huge, m, np_, args.seed)
        figs["huge"] = measure("stream", huge, args.trim)
    lag = None
    if not args.targets_only:
        lag = delay(d, args.rate, args.seconds, np_, args.seed)
        print(f"  watch, {lag['events']:,} events written at {lag['rate']:,.0f}/s: first "
              f"verdict {lag['first'][:60]}", flush=True)
        assert lag["exit"] == 1 and lag["delay"] is not None, lag
    c = figs["clean"]
    print(f"\nsummary (ratios from this run; {events:,} events)")
    if "peer" in figs:
        speed = figs["peer"]["seconds"] / c["seconds"]
        cpu = figs["peer"]["cpu"] / c["cpu"]
        print(f"  stream speed / DuckDB peer's          {speed:6.2f}x  (target >= 3; "
              f"in CPU time {cpu:.2f}x)")
    print(f"  stream peak memory                    {c['rss_mb']:6.0f} MB (target < 1024)")
    print(f"  twice the trace: memory ratio         {figs['double']['rss_mb'] / c['rss_mb']:6.2f}x"
          "  (target <= 1.2)")
    late = figs["late"]
    print(f"  late breach: time ratio               {late['seconds'] / c['seconds']:6.2f}x"
          f"  (target <= 1.5; in CPU time {late['cpu'] / c['cpu']:.2f}x)")
    print(f"  late breach: memory ratio             {figs['late']['rss_mb'] / c['rss_mb']:6.2f}x"
          "  (target <= 1.5)")
    print(f"  late breach: {', '.join(figs['late']['violated'])}; decided "
          f"{figs['late']['modes']}")
    e = figs["early"]
    print(f"  early breach ({e['events']:,} events, held {e['held']:,}; decided "
          f"{e['modes']}): {e['seconds']:.1f} s, {e['cpu']:.1f} s CPU, peak memory "
          f"{e['rss_mb']:.0f} MB (target < 1024; reading {e['read_mb']:.0f} MB); against "
          f"the clean trace: time {e['seconds'] / c['seconds']:.2f}x, CPU "
          f"{e['cpu'] / c['cpu']:.2f}x, memory {e['rss_mb'] / c['rss_mb']:.2f}x")
    r = figs["repeat"]
    print(f"  early repeat ({r['events']:,} events, held {r['held']:,}; decided "
          f"{r['modes']}): {r['seconds']:.1f} s, {r['cpu']:.1f} s CPU, peak memory "
          f"{r['rss_mb']:.0f} MB; against the clean trace: CPU {r['cpu'] / c['cpu']:.2f}x, "
          f"memory {r['rss_mb'] / c['rss_mb']:.2f}x")
    for key, name in (("small", "early breach"), ("small-repeat", "early repeat")):
        if key not in figs:
            continue
        cut, every = figs[key], figs[key + "-all"]
        print(f"  {name}, a tenth as long ({cut['events']:,} events): cut "
              f"{cut['rss_mb']:.0f} MB, {cut['cpu']:.1f} s CPU / not cut "
              f"{every['rss_mb']:.0f} MB, {every['cpu']:.1f} s CPU (memory "
              f"{cut['rss_mb'] / every['rss_mb']:.2f}x, CPU {cut['cpu'] / every['cpu']:.2f}x; "
              f"peak while reading {cut['read_mb']:.0f} / {every['read_mb']:.0f} MB)")
    if lag is not None:
        print_delay(lag)
    if "grouped" in figs:
        print_grouped(figs["grouped"], figs["grouped-whole"])
        print_senders(figs["senders"], figs["senders-waiting"])
    if "huge" in figs:
        h = figs["huge"]
        print(f"  10^8 events: {h['seconds']:.0f} s, {h['rss_mb']:.0f} MB, exit {h['exit']}")
    return 0


def retired_runs(args: argparse.Namespace) -> int:
    """``--retired-only`` (module docstring)."""
    n, np_ = args.messages // 10, args.processes
    if args.smoke:
        n, np_ = 3000, 4
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    swap_at, crash_at = n - 1000, min(1000, n // 4)
    # past the first trim (canon.TRIM_AT): a process seen before it holds the low
    # watermark where it is, at 0 for one that never delivers
    behind_from = min(40_000, n // 3)
    clean = d / f"long-{np_}x{n}-{args.seed}.parquet"
    crash = d / f"long-{np_}x{n}-{args.seed}-swap{swap_at}-crash{crash_at}.parquet"
    both = d / f"long-{np_}x{n}-{args.seed}-swap{swap_at}-crash{crash_at}-" \
        f"behind{behind_from}.parquet"
    print(f"stream_bench --retired-only (seed {args.seed}): {np_} processes x {n:,} "
          "messages, --liveness's properties", flush=True)
    make(clean, n, np_, args.seed)
    make_crash(crash, n, np_, args.seed, swap_at, crash_at)
    make_crash(both, n, np_, args.seed, swap_at, crash_at, behind_from)
    # the smoke's trace is read a few hundred records at a time (else in one batch,
    # broken before anything retired)
    buffer = 200 if args.smoke else None
    figs = {"clean": measure("stream", clean, args.trim, buffer, ", clean", end=True)}
    for key, path in (("crash", crash), ("behind", both)):
        figs[key] = measure("stream", path, args.trim, buffer, ", in the pass", end=True)
        figs[key + "-whole"] = measure("stream", path, args.trim, buffer, ", as before",
                                       end=True, no_prefix=True)
        now, was = figs[key], figs[key + "-whole"]
        assert now["violated"] == was["violated"] and now["violated"], (now, was)
        assert now["whole"] == 0 and was["whole"] == 1, (now, was)
    c = figs["clean"]
    print(f"\nsummary ({c['events']:,} events clean)")
    for key, name in (("crash", "a crash"), ("behind", "a crash and a process behind")):
        now, was = figs[key], figs[key + "-whole"]
        print(f"  late breach with {name} ({now['events']:,} events; "
              f"{', '.join(now['violated'])}): in the pass {now['cpu']:.1f} s CPU, "
              f"{now['rss_mb']:.0f} MB ({now['cpu'] / c['cpu']:.2f}x and "
              f"{now['rss_mb'] / c['rss_mb']:.2f}x the clean trace's); as before "
              f"(whole) {was['cpu']:.1f} s CPU, {was['rss_mb']:.0f} MB")
    return 0


def make_sender_only(path: Path, messages: int, processes: int, seed: int,
                     swap_at: int | None = None) -> None:
    """The trace of ``make`` (``swap_at``: p0's deliveries there and after swapped) with
    every 50th message, from the first on, sent by a process of its own that delivers
    nothing (a client)."""
    import numpy as np
    import pyarrow as pa

    from tomkit.traces.long_trace import long_trace_tables
    from tomkit.traces.writer import TraceWriter

    if path.exists():
        return
    tmp = path.with_name("tmp-" + path.name)
    with TraceWriter(tmp) as w:
        for table in long_trace_tables(messages, n_processes=processes, seed=seed,
                                       swap_at=swap_at):
            proc = np.asarray(table.column("process").to_numpy(zero_copy_only=False),
                              object)
            kind = np.asarray(table.column("kind").to_numpy(zero_copy_only=False), object)
            msg = table.column("msg").to_numpy(zero_copy_only=False)
            num = np.array([int(m[1:]) for m in msg], np.int64)
            proc[(kind == "send") & (num % 50 == 0)] = f"p{processes}"
            w.write_table(table.set_column(table.column_names.index("process"), "process",
                                           pa.array(proc, pa.string())))
    tmp.rename(path)


def sender_only_runs(args: argparse.Namespace) -> int:
    """``--sender-only`` (module docstring)."""
    n, np_ = args.messages // 10, args.processes
    if args.smoke:
        n, np_ = 3000, 4
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    clean = d / f"long-{np_}x{n}-{args.seed}.parquet"
    client = d / f"long-{np_}x{n}-{args.seed}-client.parquet"
    print(f"stream_bench --sender-only (seed {args.seed}): {np_} processes x {n:,} "
          f"messages, p{np_} sends every 50th and delivers none", flush=True)
    make(clean, n, np_, args.seed)
    make_sender_only(client, n, np_, args.seed)
    swap_at = n - 1000
    broken = d / f"long-{np_}x{n}-{args.seed}-swap{swap_at}.parquet"
    broken_client = d / f"long-{np_}x{n}-{args.seed}-swap{swap_at}-client.parquet"
    make(broken, n, np_, args.seed, swap_at)
    make_sender_only(broken_client, n, np_, args.seed, swap_at)
    buffer = 200 if args.smoke else None  # (the smoke's: several reads, several trims)
    for end, late in ((False, False), (True, False), (True, True)):
        print(("broken late (p0's deliveries swapped 1,000 messages before the end), "
               if late else "") +
              ("with --liveness's properties" if end else "the default properties"),
              flush=True)
        a, b = (broken, broken_client) if late else (clean, client)
        figs = {"clean": measure("stream", a, args.trim, buffer, ", no client", end=end),
                "now": measure("stream", b, args.trim, buffer, ", client passed",
                               end=end),
                "was": measure("stream", b, args.trim, buffer, ", as before",
                               end=end, no_senders_pass=True)}
        for f in figs.values():
            assert f["modes"].get("slow" if late else "fast") == 1 and not f["whole"], f
        # the client never delivers: a correct process that owes every message
        assert figs["now"]["violated"] == figs["was"]["violated"], figs
        assert {"agreement", "liveness", "validity"} <= set(figs["now"]["violated"]) \
            if end else not figs["now"]["violated"], figs
        c, now, was = figs["clean"], figs["now"], figs["was"]
        print(f"summary ({now['events']:,} events with the client)")
        for name, f in (("no client", c), ("client passed", now), ("as before", was)):
            print(f"  {name:<14} held {f['window']:>9,} positions {f['held']:>10,} "
                  f"records {f['cpu']:7.1f} s CPU {f['rss_mb']:7.0f} MB")
        print(f"  client passed / as before: {now['rss_mb'] / was['rss_mb']:.2f}x memory, "
              f"{now['cpu'] / was['cpu']:.2f}x CPU; / no client: "
              f"{now['rss_mb'] / c['rss_mb']:.2f}x memory\n", flush=True)
    return 0


def latency_runs(args: argparse.Namespace) -> int:
    """``--latency-only`` (module docstring)."""
    n, np_, b = args.messages, args.processes, args.latency_bound
    if args.smoke:
        n, np_ = 3000, 4
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    print(f"stream_bench --latency-only (seed {args.seed}, bound {b:g} s): "
          f"{np_} processes x {n:,} messages, {n * (np_ + 1):,} events, Parquet; "
          f"children run by {PYTHON}", flush=True)
    figs = {}
    # the smoke (tests/bench/) checks the tiny trace only, against the whole-trace engine
    sizes = (("", n),) if args.smoke else (("", n), ("small ", n // 10))
    for tag, m in sizes:
        at = m - min(1000, m // 10)
        clean = d / f"long-{np_}x{m}-{args.seed}.parquet"
        slow = d / f"long-{np_}x{m}-{args.seed}-slow{at}.parquet"
        make(clean, m, np_, args.seed)
        make_slow(slow, m, np_, args.seed, at)
        figs[tag + "clean"] = measure("stream", clean, args.trim, label=", bound", bound=b)
        figs[tag + "slow"] = measure("stream", slow, args.trim, label=", bound", bound=b)
        if tag == sizes[-1][0]:
            figs[tag + "slow whole"] = measure("whole", slow, None, label=", bound",
                                               bound=b)
    for k, f in figs.items():
        print(f"  {k:<18} exit {f['exit']} decided {f['modes']} whole {f.get('whole', '-')}: "
              f"{f['cpu']:.1f} s CPU, {f['rss_mb']:.0f} MB; violated {f['violated']}")
    c, s = figs["clean"], figs["slow"]
    print(f"  late latency breach / clean: CPU {s['cpu'] / c['cpu']:.2f}x, memory "
          f"{s['rss_mb'] / c['rss_mb']:.2f}x")
    tag = sizes[-1][0]
    w, p = figs[tag + "slow whole"], figs[tag + "slow"]
    assert p["violated"] == w["violated"] == ["latency"] and not p["whole"], (p, w)
    print(f"  {tag or 'the same size, '}whole-trace engine / single pass: CPU "
          f"{w['cpu'] / p['cpu']:.2f}x, memory {w['rss_mb'] / p['rss_mb']:.2f}x; the same "
          f"latency report: {w['latency'] == p['latency']}")
    return 0


def owed_runs(args: argparse.Namespace) -> int:
    """--owed-only: what tomkit check --liveness asks (the defaults, agreement, validity,
    liveness) on the clean trace and on it broken early (p0's deliveries 1,000 and 1,001
    swapped), across the cut and, up to 500,000 messages, as before (``--no-owed``:
    every held record checked); each in its own process, the same files."""
    n, np_ = args.messages, args.processes
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    early_at = min(1000, n // 40)
    clean = d / f"long-{np_}x{n}-{args.seed}.parquet"
    early = d / f"long-{np_}x{n}-{args.seed}-swap{early_at}.parquet"
    make(clean, n, np_, args.seed)
    make(early, n, np_, args.seed, swap_at=early_at)
    buffer = 200 if args.smoke else None
    print(f"stream_bench (seed {args.seed}): {np_} processes x {n:,} messages = "
          f"{n * (np_ + 1):,} events, Parquet, --liveness", flush=True)
    figs = {"clean": measure("stream", clean, args.trim, end=True),
            "cut": measure("stream", early, args.trim, buffer, ", across the cut", end=True)}
    if n <= 500_000:
        figs["before"] = measure("stream", early, args.trim, buffer, ", every held record",
                                 end=True, no_owed=True)
        assert figs["before"]["violated"] == figs["cut"]["violated"], figs
        assert "narrowed" not in figs["before"]["modes"], figs["before"]
    assert figs["cut"]["modes"] == {"slow": 1, "narrowed": 1}, figs["cut"]
    assert figs["clean"]["exit"] == 0 and figs["cut"]["violated"], figs
    c = figs["clean"]
    print("\n| run | CPU | peak memory | decided |\n|---|---|---|---|")
    for k, label in (("clean", "clean"), ("cut", "broken early, across the cut"),
                     ("before", "broken early, every held record (before)")):
        if k in figs:
            f = figs[k]
            print(f"| {label} | {f['cpu']:.1f} s ({f['cpu'] / c['cpu']:.2f}x) | "
                  f"{f['rss_mb']:,.0f} MB ({f['rss_mb'] / c['rss_mb']:.2f}x) | "
                  f"{', '.join(sorted(f['modes']))} |")
    return 0


def grouped_broken_runs(clean: Path, messages: int, processes: int,
                        args: argparse.Namespace) -> int:
    """The grouped trace where every process sends, clean and with the last process's
    deliveries swapped early (message 1,000) and late (``messages`` - 1,000): the broken ones read
    again interleaved (regroup.py) and, as before, sent to the whole-trace engine
    (``--no-regroup``), each in its own process."""
    make_grouped_all(clean, messages, processes, args.seed)
    at = {"early": min(1000, messages // 4), "late": max(messages - 1000, messages // 2)}
    files = {}
    for name, k in at.items():
        files[name] = clean.with_name(clean.stem + f"-swap{k}.parquet")
        make_grouped_all(files[name], messages, processes, args.seed, swap_at=k)
    c = measure("stream", clean, args.trim, label=", clean")
    figs = {}
    for name, path in files.items():
        figs[name] = measure("stream", path, args.trim, label=f", {name}, regrouped")
        figs[name + "-whole"] = measure("stream", path, args.trim,
                                        label=f", {name}, whole", no_regroup=True)
        assert figs[name]["violated"] == figs[name + "-whole"]["violated"] != [], figs
        assert figs[name]["whole"] == 0 and figs[name + "-whole"]["whole"] == 1, figs
    print(f"| run (grouped by process, every process sends, {c['events']:,} events) | CPU "
          "| peak memory | decided |")
    print("|---|---|---|---|")
    print(f"| clean | {c['cpu']:.1f} s | {c['rss_mb']:,.0f} MB | "
          f"{', '.join(sorted(c['modes']))} |")
    for name, f in figs.items():
        label = name.replace("-whole", ", as before (whole)")
        label = label if "whole" in name else f"{name}, read again interleaved"
        print(f"| p{processes - 1}'s deliveries {at[name.split('-')[0]]:,} and the next "
              f"swapped, {label} | "
              f"{f['cpu']:.1f} s ({f['cpu'] / c['cpu']:.2f}x) | {f['rss_mb']:,.0f} MB "
              f"({f['rss_mb'] / c['rss_mb']:.2f}x) | {', '.join(sorted(f['modes']))} |",
              flush=True)
    return 0


def print_grouped(disk: dict, whole: dict) -> None:
    # (on the smoke's tiny trace one read holds it all: nothing lags, both stay fast)
    assert disk["exit"] == whole["exit"] == 0 and disk["modes"] == {"fast": 1}, disk
    print(f"  grouped by process ({disk['events']:,} events): lag read from disk "
          f"{disk['seconds']:.1f} s, {disk['cpu']:.1f} s CPU, {disk['rss_mb']:.0f} MB "
          f"(held {disk['held']:,} records, {disk['window']:,} positions); whole "
          f"{whole['seconds']:.1f} s, {whole['cpu']:.1f} s CPU, {whole['rss_mb']:.0f} MB: "
          f"memory {disk['rss_mb'] / whole['rss_mb']:.2f}x, CPU {disk['cpu'] / whole['cpu']:.2f}x"
          f" (decided {disk['modes']} / {whole['modes']})", flush=True)


def print_behind(pass_: dict, whole: dict, kept: dict, off: dict) -> None:
    assert pass_["exit"] == whole["exit"] == 1 and pass_["whole"] == 0, pass_
    assert pass_["violated"] == whole["violated"], (pass_, whole)
    print(f"  a process behind the retired prefix ({pass_['events']:,} events, "
          f"{', '.join(pass_['violated'])} violated): in the pass {pass_['cpu']:.1f} s CPU, "
          f"{pass_['rss_mb']:.0f} MB; whole {whole['cpu']:.1f} s CPU, "
          f"{whole['rss_mb']:.0f} MB ({whole['whole']} trace to the whole-trace engine): "
          f"CPU {pass_['cpu'] / whole['cpu']:.2f}x, memory "
          f"{pass_['rss_mb'] / whole['rss_mb']:.2f}x", flush=True)
    rows = kept.get("retired_rows", 0)
    print(f"  the retired witnesses on the clean trace ({kept['events']:,} events, "
          f"{rows:,} positions retired): {kept['cpu']:.1f} s CPU against "
          f"{off['cpu']:.1f} s ({kept['cpu'] / off['cpu']:.2f}x), {kept['rss_mb']:.0f} MB "
          f"against {off['rss_mb']:.0f} MB; on disk {kept['retired_mb']:.0f} MiB "
          f"({kept['retired_mb'] * 2 ** 20 / max(rows, 1):.1f} bytes a position)",
          flush=True)


def print_senders(disk: dict, waits: dict) -> None:
    assert disk["exit"] == waits["exit"] == 0 and disk["modes"] == {"fast": 1}, disk
    print(f"  grouped by process, every process sends ({disk['events']:,} events): sends "
          f"awaited {disk['cpu']:.1f} s CPU, {disk['rss_mb']:.0f} MB (held "
          f"{disk['held']:,} records, {disk['window']:,} positions); the window waiting "
          f"{waits['cpu']:.1f} s CPU, {waits['rss_mb']:.0f} MB (held {waits['held']:,}, "
          f"{waits['window']:,} positions): memory {disk['rss_mb'] / waits['rss_mb']:.2f}x",
          flush=True)


def print_delay(lag: dict) -> None:
    print(f"  delay, breach written -> reported     {lag['delay']:6.2f} s at "
          f"{lag['rate']:,.0f} events/s (target < 1; load average {lag['load'][0]:.1f} "
          f"-> {lag['load'][1]:.1f})")
    print(f"  watch's CPU                           {lag['cpu']:6.2f} s, "
          f"{lag['cpu_us']:.1f} us an event ({lag['cpu_us'] * lag['rate'] / 1e6:.2f} of a "
          "core at that rate, start-up and final report included)")
    if lag["behind"] is not None:
        print(f"  watch behind the writer at the breach  {lag['behind']:,} events "
              f"({lag['behind'] / lag['rate']:.2f} s of writing; its summary lines come "
              "every 0.1 s)")
    if lag["follow_us"] is not None:
        print(f"  watch's CPU while following           {lag['follow_us']:6.1f} us an event "
              f"({lag['follow_us'] * lag['rate'] / 1e6:.2f} of a core), up to the report")


if __name__ == "__main__":
    sys.exit(main())
