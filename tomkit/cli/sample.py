"""``tomkit sample``: small synthetic traces, clean or with a planted fault
(``traces/generate.py``), to try the checker on. The traces are written as they are made
(a batch at a time, so a hundred million of them need no memory for all), with a progress
bar on stderr when it is a terminal (``-q``: none), as ``tomkit generate`` and ``check``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from .parser import closest, not_a_file_out
from .sizes import RECORD_BYTES, show_bytes

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "sample", help="write small synthetic traces, clean or with a planted fault, to try "
        "the checker on")
    s.add_argument("--out", required=True, metavar="FILE",
                   help=".jsonl, .jsonl.gz or .parquet")
    s.add_argument("--fault", metavar="NAME", help="plant this fault in every trace")
    s.add_argument("--traces", type=int, default=1)
    s.add_argument("--processes", type=int, default=4)
    s.add_argument("--messages", type=int, default=12)
    s.add_argument("--views", action="store_true", help="log view events")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
    from tomkit.traces.interrupt import add_note, uninterrupted
    from tomkit.traces.writer import TraceWriter, output_format

    if args.fault and args.fault not in FAULTS:
        print(f"tomkit sample: unknown fault {args.fault}; known: {', '.join(FAULTS)}"
              f"{closest(args.fault, FAULTS)}", file=sys.stderr)
        return 2
    for flag, value in (("--traces", args.traces), ("--processes", args.processes),
                        ("--messages", args.messages)):
        if value < 1:
            print(f"tomkit sample: {flag} must be at least 1, got {value}", file=sys.stderr)
            return 2
    if args.seed < 0:  # numpy's seeds are >= 0; its own message names no flag
        print(f"tomkit sample: --seed must be >= 0, got {args.seed}", file=sys.stderr)
        return 2
    try:
        if not args.out:  # an unset shell variable, say; not ": cannot tell the format"
            raise ValueError("--out is an empty name; give a file name")
        fmt, compressed = output_format(args.out)
        if os.path.isdir(args.out):
            raise ValueError(f"--out {args.out}: a folder; give a file name")
        if not_a_file_out("--out", args.out):
            raise ValueError(not_a_file_out("--out", args.out))
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        too_big = beyond_machine(args, "jsonl" if fmt == "jsonl" and not compressed
                                 else "compressed")
        if too_big:
            raise ValueError(too_big)
    except (ValueError, OSError) as e:
        print(f"tomkit sample: {e}", file=sys.stderr)
        return 2
    truths: list[dict] = []
    kw = dict(n_processes=args.processes, n_messages=args.messages, views=args.views)
    bar = _bar(args.traces, args.quiet)
    w, made = None, 0
    try:
        with TraceWriter(args.out, grouped=True) as w:
            batch: list[dict] = []
            flushed = 0  # records written before the batch
            try:
                for i in range(args.traces):
                    tid = f"t{i}"
                    seed = args.seed + i
                    if args.fault:
                        recs, truth = faulty_trace(tid, args.fault, seed=seed, **kw)
                        truths.append(truth)
                    else:
                        recs = clean_trace(tid, seed=seed, **kw)
                    with uninterrupted():  # the count of traces goes with the batch
                        batch.extend(recs)
                        made += 1
                    if len(batch) >= BATCH:
                        w.write_many(batch)  # Ctrl-C waits for it (traces/interrupt.py)
                        batch, flushed = [], w.count
                    if bar is not None:
                        bar.update()
            except KeyboardInterrupt:
                # the traces made so far are whole: written (what the batch's write had
                # not yet written, when it was stopped part way), then the writer closes
                # the file as a valid one and says how many records it kept
                w.write_many(batch[w.count - flushed:])
                raise
            w.write_many(batch)
        n = w.count
    except KeyboardInterrupt as e:
        if w is not None and w.count:
            add_note(e, f"they are the first {made:,} of {args.traces:,} traces, each "
                     f"whole (seed {args.seed})")
        raise
    except ValueError as e:  # a fault that needs more processes or messages
        print(f"tomkit sample: {e}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    what = f"trace(s) with a planted '{args.fault}' fault" if args.fault else "clean trace(s)"
    print(f"wrote {n} events of {args.traces} {what} to {args.out} (seed {args.seed})")
    for t in truths:
        print(f"  planted in {t['trace']}: {t['fault']} -> {t['property']}")
    return 0


#: records written at a time: the writer checks and encodes a batch column by column
BATCH = 200_000

#: bytes a record takes on disk at the least: about half of what the default traces
#: take (80 in JSON Lines, 9-10 compressed or in Parquet)
DISK_BYTES = {"jsonl": 40, "compressed": 2}


def beyond_machine(args: argparse.Namespace, kind: str, *, memory: int | None = None,
                   free: int | None = None) -> str | None:
    """Why the sample asked for cannot be made here, from lower bounds (at least a send
    and a delivery by each process per message): a trace is made whole in memory before
    it is written, and the file must fit on its disk (``memory`` and ``free`` bytes;
    default: this machine's). None when it may fit. A huge number is a typo far more
    often than a wish."""
    if memory is None:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if free is None:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(args.out))).free
    per_trace = args.messages * (args.processes + 1)
    if per_trace * RECORD_BYTES > memory:
        return (f"--processes {args.processes} --messages {args.messages}: a trace is made "
                f"whole in memory, at least {per_trace:,} records, about "
                f"{show_bytes(per_trace * RECORD_BYTES)}, and this machine has "
                f"{show_bytes(memory)}; ask for fewer")
    need = args.traces * per_trace * DISK_BYTES[kind]
    if need > free:
        return (f"--traces {args.traces}: at least {args.traces * per_trace:,} records, "
                f"about {show_bytes(need)} in {args.out}, and its disk has "
                f"{show_bytes(free)} free; ask for fewer")
    return None


def _bar(total: int, quiet: bool):
    """A tqdm bar of traces on stderr, as ``tomkit check``'s (none when quiet, or when
    stderr is not a terminal)."""
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=" traces", unit_scale=True, file=sys.stderr, desc="sample")
