"""``python -m tomkit.record SYSTEM [--run NAME...] --out DIR``: record a real system's runs.

Each run is written as ``DIR/SYSTEM-RUN-sSEED.jsonl.gz`` and summarised (records per
kind); check it with ``tomkit check --guarantee PROFILE FILE`` (the profile each
system documents is printed). Exit 0: recorded; 2: bad usage, or the system cannot
run here (the reason is printed).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections import Counter
from pathlib import Path

from tomkit.record import SYSTEMS


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tomkit.record", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("system", choices=SYSTEMS)
    p.add_argument("--run", action="append", default=[],
                   help="a run by name (repeatable; default: all of the system's runs)")
    p.add_argument("--out", default="out/record", help="folder for the traces")
    p.add_argument("--seed", type=int, default=1,
                   help="seeds the clients' pauses and the run's name (the system itself is "
                   "not deterministic)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per run (bound)")
    args = p.parse_args(argv)
    mod = importlib.import_module(f"tomkit.record.{args.system}.recorder")
    why = mod.available()
    if why:
        print(f"{args.system}: cannot record here: {why}", file=sys.stderr)
        return 2
    names = args.run or list(mod.RUNS)
    unknown = [n for n in names if n not in mod.RUNS]
    if unknown:
        print(f"unknown run {unknown[0]!r}; {args.system} has {', '.join(mod.RUNS)}",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"seed {args.seed}")
    for name in names:
        path = out / f"{args.system}-{name}-s{args.seed}.jsonl.gz"
        t0 = time.monotonic()
        print(f"{args.system} {name}: recording (at most {args.timeout:g} s)")
        log = mod.record(mod.RUNS[name], path, seed=args.seed, timeout=args.timeout)
        kinds = Counter(r["kind"] for r in log.records)
        print(f"  {path}: {len(log.records)} records "
              f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in "
              f"{time.monotonic() - t0:.1f} s")
        if hasattr(mod, "profile_file"):
            print(f"  check: tomkit check --guarantee-file {mod.profile_file(mod.RUNS[name])} "
                  f"{path}")
        else:
            print(f"  check: tomkit check --guarantee {mod.PROFILE} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
