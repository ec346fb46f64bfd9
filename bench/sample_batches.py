"""``tomkit sample`` written a batch at a time against written once, in the same run.

``tomkit sample`` writes its traces a batch of ``BATCH`` records at a time as they are
made (``tomkit/cli/sample.py``), where it once kept every record until the end and wrote
them in one call. A round runs, one after the other and each in a fresh process (the
command's own ``main``, with ``BATCH`` set before it runs), ``tomkit sample --traces N
--out FILE -q`` with the batch of today and with one batch larger than the whole run
(the old way), and prints each process's user and system CPU seconds, minor page faults
and peak memory; then the medians and the ratio batched / once of user + system CPU.
CPU seconds are the figure to compare on a loaded machine (docs/cli.md: the figures).

    nice -n 10 .venv/bin/python bench/sample_batches.py [--traces 10000] [--rounds 5]
        [--format parquet|jsonl|jsonl.gz]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from tomkit.cli.sample import BATCH

ONCE = 10**12  # a batch larger than any run: every record written by one call
RUN = ("import sys; from tomkit.cli import sample; sample.BATCH = int(sys.argv[1]); "
       "from tomkit.cli import main; sys.exit(main(sys.argv[2:]))")


def one(batch: int, out: str, traces: int) -> tuple[float, float, int, float]:
    """user s, system s, minor faults, peak GB of one ``tomkit sample``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    p = subprocess.Popen([sys.executable, "-c", RUN, str(batch), "sample", "--out", out,
                          "--traces", str(traces), "-q"], stdout=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(f"tomkit sample failed (status {status})")
    return ru.ru_utime, ru.ru_stime, ru.ru_minflt, ru.ru_maxrss / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--format", default="parquet", choices=("parquet", "jsonl", "jsonl.gz"))
    args = ap.parse_args()
    out = os.path.join(tempfile.mkdtemp(), f"sample.{args.format}")
    one(ONCE, out, 10)  # bytecode compiled once, outside the rounds
    rows: dict[int, list[tuple[float, float, int, float]]] = {BATCH: [], ONCE: []}
    for r in range(args.rounds):
        for batch in (BATCH, ONCE):
            row = one(batch, out, args.traces)
            rows[batch].append(row)
            print(f"round {r + 1} {'batched' if batch == BATCH else 'once':8s} user "
                  f"{row[0]:6.2f} s  sys {row[1]:5.2f} s  minor faults {row[2]:7d}  peak "
                  f"{row[3]:.2f} GB", flush=True)
    cpu = {b: statistics.median(u + s for u, s, _, _ in rs) for b, rs in rows.items()}
    for b, name in ((BATCH, "batched"), (ONCE, "once")):
        rs = rows[b]
        print(f"{name:8s} median user+sys {cpu[b]:.2f} s (user "
              f"{statistics.median(u for u, *_ in rs):.2f}, sys "
              f"{statistics.median(s for _, s, *_ in rs):.2f}), peak "
              f"{max(m for *_, m in rs):.2f} GB")
    print(f"batched / once: {cpu[BATCH] / cpu[ONCE]:.3f} of the CPU "
          f"({args.traces:,} traces, {args.format}, {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
