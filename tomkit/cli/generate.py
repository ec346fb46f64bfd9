"""``tomkit generate``: write a partitioned Parquet data set of simulated traces, a chosen
fraction of them from faulty variants (``model/dataset.py``).

Exit codes: 0 written,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from tomkit.model.dataset import CONFIGS, generate, write_bulk
from tomkit.traces.interrupt import add_note

from .parser import closest
from .sizes import show_bytes

__all__ = ["add_parser", "bad_numbers", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    g = subparsers.add_parser(
        "generate", help="write a data set of simulated traces (Parquet, partitioned)",
        description="Simulate many small traces of ToTo-family protocols in parallel and "
        "write DIR/protocol=P/config=C/part-*.parquet, with a fraction from faulty variants "
        "(a broken delivery rule, a reordering sequencer, planted faults) and their ground "
        "truth in DIR/_ground_truth.jsonl. 'tomkit scan DIR' checks it.")
    g.add_argument("--protocol", action="append", metavar="NAME",
                   help=f"{', '.join(CONFIGS)} or synthetic (the fast bulk generator); "
                   "repeat or comma-separate (default: all simulated protocols)")
    g.add_argument("--traces", type=int, required=True)
    g.add_argument("--out", required=True, metavar="DIR", help="replaced atomically")
    g.add_argument("--faulty", type=float, default=0.0,
                   help="fraction of traces from faulty variants (default 0)")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    g.set_defaults(func=run)
    return g


def run(args: argparse.Namespace) -> int:
    names = [p for x in (args.protocol or []) for p in x.split(",") if p]
    if args.traces < 1:
        print("tomkit generate: --traces must be >= 1", file=sys.stderr)
        return 2
    known = [*CONFIGS, "synthetic"]
    if args.protocol is not None and not names:  # an unset shell variable: every
        # protocol was generated, as if the option was not given
        print(f"tomkit generate: --protocol {' '.join(map(repr, args.protocol))}: names "
              f"no protocol; give one of {', '.join(known)}, or leave the option out",
              file=sys.stderr)
        return 2
    unknown = [p for p in names if p not in known]
    bad = (f"unknown protocol {unknown[0]}; known: {', '.join(known)}"
           f"{closest(unknown[0], known)}" if unknown else None) or \
        _bad_out(args.out) or bad_numbers(args)
    if bad:
        print(f"tomkit generate: {bad}", file=sys.stderr)
        return 2
    try:
        if names == ["synthetic"]:
            s = write_bulk(args.out, args.traces, faulty=args.faulty, seed=args.seed,
                           progress=not args.quiet)
        else:
            s = generate(args.out, names or list(CONFIGS), args.traces, faulty=args.faulty,
                         seed=args.seed, workers=args.workers, progress=not args.quiet)
    except ValueError as e:
        print(f"tomkit generate: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # model/dataset.py removed its unfinished folder
        was = "left as it was" if os.path.exists(args.out) else "not made"
        add_note(e, f"{args.out} {was}: a data set replaces it only once complete (the "
                 "part made so far was removed)")
        raise
    print(f"wrote {s['traces']:,} traces ({s['records']:,} records, {s['faulty_traces']:,} "
          f"faulty) to {args.out}; seed {args.seed}")
    return 0


#: the file a data set of tomkit generate holds (model/dataset.py), which marks a folder
#: it may replace
MARK = "_generate.json"


def _bad_out(out: str) -> str | None:
    """--out is replaced whole: refuse a file, a name that reads as a trace file, and a
    folder this command did not write (the user's own files would be deleted)."""
    if out == "":  # an unset shell variable: the name resolved to the current folder,
        # which was replaced by the data set and deleted with everything in it
        return ("--out '': an empty name; give a new folder (an empty one would name the "
                "current folder, which is replaced whole)")
    if os.path.isfile(out):
        return f"--out {out}: a file; --out takes a folder, which is replaced whole"
    if not os.path.exists(out) and \
            out.lower().endswith((".jsonl", ".jsonl.gz", ".json", ".parquet")):
        return (f"--out {out}: a trace file's name; generate writes a folder of traces "
                "(tomkit sample or simulate write one file)")
    if os.path.isdir(out) and os.listdir(out) and \
            not os.path.exists(os.path.join(out, MARK)):
        return (f"--out {out}: a folder that tomkit generate did not write (no {MARK}); "
                "it would be replaced whole: give a new folder")
    return None


#: bytes a trace takes on disk at the least: a send and a delivery, 2 bytes each in
#: Parquet (the smallest trace any configuration makes holds tens of records)
TRACE_BYTES = 4
#: worker processes per core at most: more only wait their turn (and a typo's 100,000
#: would fork until the machine refuses)
WORKERS_PER_CORE = 4


def bad_numbers(args: argparse.Namespace, *, free: int | None = None) -> str | None:
    """Why ``--faulty``, ``--seed``, ``--workers`` or ``--traces`` cannot be served here
    (``free``: the bytes free on --out's disk; default: measured), or None."""
    if not 0.0 <= args.faulty <= 1.0:
        return f"--faulty is a fraction of the traces, from 0 to 1, got {args.faulty}"
    if args.seed < 0:  # numpy's seeds are >= 0; its own message names no flag
        return f"--seed must be >= 0, got {args.seed}"
    cores = os.cpu_count() or 1
    if args.workers is not None and not 1 <= args.workers <= WORKERS_PER_CORE * cores:
        return (f"--workers must be from 1 to {WORKERS_PER_CORE * cores} "
                f"({WORKERS_PER_CORE} per core, {cores} cores here), got {args.workers}")
    if free is None:
        folder = os.path.dirname(os.path.abspath(args.out))
        while not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        free = shutil.disk_usage(folder).free
    if args.traces * TRACE_BYTES > free:
        return (f"--traces {args.traces}: at least {show_bytes(args.traces * TRACE_BYTES)} "
                f"on disk, and {args.out}'s has {show_bytes(free)} free; ask for fewer")
    return None
