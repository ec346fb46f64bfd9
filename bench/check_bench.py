"""Benchmark of `tomkit check`: events per second beside same-run baselines.

On a generated set of about 10 million events (11,000 traces of 8 processes
and 100 messages by default), in Parquet and in JSON Lines, it times:

- the bare parse/scan of the file (pyarrow reading every column; for JSON
  Lines, pyarrow's multi-threaded JSON parser),
- tomkit's reader alone (parse + validation, no checks),
- `tomkit check` with every property (liveness and latency included),
- a peer: the same core checks (duplicate delivery, creation, weak and
  strong total order) as plain DuckDB SQL, which a user could pick instead.

Machines here are noisy, so only ratios measured in the same run count:
the targets are check >= 5x the DuckDB peer's events/s on Parquet, and
check <= 2x the bare parse time on JSON Lines.

    python bench/check_bench.py [--traces 11000] [--seed 1] [--dir out/bench]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pyarrow.json as pj
import pyarrow.parquet as pq

from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.traces.generate import bulk_table
from tomkit.traces.reader import TraceReader
from tomkit.traces.writer import TraceWriter

PEER_SQL = """
WITH ev AS (SELECT *, row_number() OVER () AS rn FROM {source}),
d AS (SELECT trace, process, msg,
             row_number() OVER (PARTITION BY trace, process ORDER BY rn) AS pos
      FROM ev WHERE kind = 'deliver'),
dup AS (SELECT DISTINCT trace FROM d GROUP BY trace, process, msg HAVING count(*) > 1),
unsent AS (SELECT DISTINCT d.trace FROM d
           ANTI JOIN (SELECT trace, msg FROM ev WHERE kind = 'send') s USING (trace, msg)),
pairs AS (SELECT a.trace, a.process AS p, b.process AS q, a.pos AS pa, b.pos AS pb
          FROM d a JOIN d b USING (trace, msg) WHERE a.process < b.process),
weak AS (SELECT DISTINCT trace FROM (
           SELECT trace, pb < lag(pb) OVER (PARTITION BY trace, p, q ORDER BY pa) AS inv
           FROM pairs) WHERE inv),
pred AS (SELECT trace, msg,
                lag(msg) OVER (PARTITION BY trace, process ORDER BY pos) AS pm FROM d),
strong AS (SELECT DISTINCT trace FROM pred GROUP BY trace, msg
           HAVING count(DISTINCT coalesce(pm, '')) > 1)
SELECT (SELECT count(*) FROM dup), (SELECT count(*) FROM unsent),
       (SELECT count(*) FROM weak), (SELECT count(*) FROM strong)
"""


def timed(label: str, fn):
    t0 = time.perf_counter()
    result = fn()
    dt = time.perf_counter() - t0
    print(f"  {label:<44} {dt:8.2f} s", flush=True)
    return dt, result


def generate(args, directory: Path) -> tuple[Path, Path, int]:
    pq_path = directory / f"bench-{args.traces}-{args.seed}.parquet"
    js_path = directory / f"bench-{args.traces}-{args.seed}.jsonl"
    if pq_path.exists() and js_path.exists():
        rows = pq.ParquetFile(pq_path).metadata.num_rows
        print(f"reusing {pq_path} and {js_path} ({rows:,} events)")
        return pq_path, js_path, rows
    print(f"generating {args.traces:,} traces x {args.processes} processes x "
          f"{args.messages} messages (seed {args.seed}) ...", flush=True)
    rows = 0
    with TraceWriter(pq_path) as wp, TraceWriter(js_path) as wj:
        for tbl in bulk_table(args.traces, n_processes=args.processes,
                              n_messages=args.messages, seed=args.seed):
            wp.write_table(tbl)
            wj.write_table(tbl)
            rows += tbl.num_rows
    print(f"  {rows:,} events; {pq_path.stat().st_size / 1e6:.0f} MB Parquet, "
          f"{js_path.stat().st_size / 1e6:.0f} MB JSON Lines")
    return pq_path, js_path, rows


def bare_parquet(path: Path) -> int:
    return sum(b.num_rows for b in pq.ParquetFile(path).iter_batches(batch_size=1 << 20))


def bare_jsonl(path: Path) -> int:
    opts = pj.ReadOptions(block_size=8 << 20)
    return pj.read_json(path, read_options=opts).num_rows


def reader_only(path: Path) -> int:
    return sum(b.table.num_rows for b in TraceReader(path))


def run_check(path: Path) -> int:
    opts = Options(latency_bound=1.0)
    props = list(properties().values())
    report = check_paths([path], props, opts)
    assert len(report.outcomes) > 0
    return report.exit_code()


def peer(path: Path, fmt: str):
    import duckdb

    src = (f"read_parquet('{path}')" if fmt == "parquet"
           else f"read_json('{path}', format='newline_delimited', "
                "columns={trace: 'VARCHAR', process: 'VARCHAR', kind: 'VARCHAR', "
                "msg: 'VARCHAR', deps: 'VARCHAR[]', time: 'DOUBLE'})")
    con = duckdb.connect()
    return con.sql(PEER_SQL.format(source=src)).fetchall()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="tomkit check benchmark")
    ap.add_argument("--traces", type=int, default=11_000)
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--messages", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="out/bench")
    ap.add_argument("--no-peer", action="store_true", help="skip the DuckDB peer")
    args = ap.parse_args(argv)
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    print(f"check_bench (seed {args.seed}); properties: {', '.join(properties())}")
    pq_path, js_path, rows = generate(args, directory)
    results = {}
    for fmt, path, bare in (("parquet", pq_path, bare_parquet), ("jsonl", js_path, bare_jsonl)):
        print(f"\n{fmt}: {path}")
        t_bare, n = timed("bare parse/scan (pyarrow)", lambda: bare(path))  # noqa: B023
        assert n in (rows, rows + 1), (n, rows)  # + the JSON Lines header line
        t_read, _ = timed("tomkit reader alone", lambda: reader_only(path))  # noqa: B023
        t_check, code = timed("tomkit check, all properties", lambda: run_check(path))  # noqa: B023
        assert code == 0, "the generated traces are clean: every property must hold"
        t_peer = None
        if not args.no_peer:
            t_peer, counts = timed("DuckDB SQL peer (4 core checks)",
                                   lambda: peer(path, fmt))  # noqa: B023
            assert counts == [(0, 0, 0, 0)], counts
        results[fmt] = (t_bare, t_read, t_check, t_peer)

    print(f"\nsummary ({rows:,} events; events/s and ratios from this run)")
    print(f"{'format':<9}{'check ev/s':>14}{'bare ev/s':>14}{'check/bare time':>17}"
          f"{'peer ev/s':>14}{'check/peer speed':>18}")
    for fmt, (t_bare, _t_read, t_check, t_peer) in results.items():
        peer_rate = f"{rows / t_peer:>14,.0f}" if t_peer else f"{'-':>14}"
        speed = f"{t_peer / t_check:>17.2f}x" if t_peer else f"{'-':>18}"
        print(f"{fmt:<9}{rows / t_check:>14,.0f}{rows / t_bare:>14,.0f}"
              f"{t_check / t_bare:>16.2f}x{peer_rate}{speed}")
    print("targets: parquet check/peer speed >= 5x; jsonl check/bare time <= 2x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
