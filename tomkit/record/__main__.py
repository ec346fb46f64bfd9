"""``python -m tomkit.record SYSTEM [--run NAME...] --out DIR``: record a real system's runs.

Each run is written as ``DIR/SYSTEM-RUN-sSEED.jsonl.gz``, summarised (records per kind)
and checked under the profile the system documents (the command and the verdict are
printed, with the first witness of a violation). Exit 0: recorded; 2: bad usage, or
the system cannot run here (the reason is printed).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import math
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from tomkit.record import SYSTEMS
from tomkit.record.faults import repeating
from tomkit.record.log import EventLog, die_with_parent
from tomkit.record.system import System
from tomkit.traces.interrupt import add_note, exit_code, stopped, terminate_as_interrupt


def main(argv: list[str] | None = None) -> int:
    """The command; with ``argv`` None it is the process's own (then SIGTERM is taken
    as Ctrl-C: the trace recorded so far is written, traces/interrupt.py)."""
    if argv is None:
        terminate_as_interrupt()
    try:
        return _main(argv)
    except KeyboardInterrupt as e:  # said in one line each, as tomkit's commands say it
        print(f"python -m tomkit.record: {stopped(e)}", file=sys.stderr)
        for note in getattr(e, "__notes__", ()):
            print(f"python -m tomkit.record: {note}", file=sys.stderr)
        return exit_code(e)


def _main(argv: list[str] | None) -> int:
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
    p.add_argument("--watch", action="store_true",
                   help="also write each run live to DIR/SYSTEM-RUN-sSEED.live.jsonl and "
                   "follow it with tomkit watch, so a breach shows while the run goes on")
    p.add_argument("--long", type=float, metavar="SECONDS",
                   help="one long run instead: clients send for SECONDS under the repeating "
                   "fault schedule (tomkit/record/faults.py), one fault every --period "
                   "seconds (ZooKeeper, NATS and RabbitMQ)")
    p.add_argument("--period", type=float, default=30.0,
                   help="seconds between faults of a long run")
    args = p.parse_args(argv)
    bad = _bad_numbers(args)
    if bad:
        p.error(bad)
    system = recorder(args.system)
    why = system.available()
    if why:
        print(f"{args.system}: cannot record here: {why}", file=sys.stderr)
        return 2
    runs = dict(system.runs)
    if args.long is not None:
        if not system.long_runs:
            longs = [s for s in SYSTEMS if recorder(s).long_runs]
            print(f"{args.system} has no long runs ({', '.join(longs)} have)",
                  file=sys.stderr)
            return 2
        runs = {"long": replace(system.runs["clean"], name="long", messages=10**9,
                                faults=repeating(system.actions), period=args.period,
                                send_for=args.long)}
        args.timeout = max(args.timeout, args.long + 180)
    names = args.run or list(runs)
    unknown = [n for n in names if n not in runs]
    if unknown:
        print(f"unknown run {unknown[0]!r}; {args.system} has {', '.join(system.runs)}",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"seed {args.seed}")
    # a boot has its own bound (booting is most of the cost, up to minutes under load)
    failed = False
    try:
        with (system.boot() if system.boot is not None
              else contextlib.nullcontext()) as boot:
            for name in names:
                failed |= not _record(system, runs[name], name, out, args, boot)
    except KeyboardInterrupt as e:
        if not getattr(e, "__notes__", None):  # _record says what it wrote, if it ran
            add_note(e, f"nothing written: stopped while {args.system} booted, before "
                     "a run began")
        raise
    return 2 if failed else 0


def _bad_numbers(args: argparse.Namespace) -> str | None:
    """What is wrong with the numbers, in one line (a run of --timeout 0 ended at once,
    --period 0 struck faults without pause)."""
    for flag, value in (("--timeout", args.timeout), ("--long", args.long),
                        ("--period", args.period)):
        if value is not None and not (math.isfinite(value) and value > 0):
            return f"{flag} must be a positive, finite number of seconds, got {value}"
    if args.seed < 0:
        return f"--seed must be >= 0, got {args.seed}"
    return None


def _record(system: System, run: Any, name: str, out: Path, args: argparse.Namespace,
            boot: Any) -> bool:
    """Record one run, print its summary and its profile's verdict; False if the run
    failed (said, and what was recorded written as a trace cut short)."""
    path = out / f"{args.system}-{name}-s{args.seed}.jsonl.gz"
    t0 = time.monotonic()
    print(f"{args.system} {name}: recording (at most {args.timeout:g} s)")
    watch = _watch(out / f"{args.system}-{name}-s{args.seed}.live.jsonl") \
        if args.watch else None
    EventLog.latest = None
    try:
        # a system that declares a boot records on the one its runs share
        log = system.record(run, path, seed=args.seed, timeout=args.timeout,
                            **({} if boot is None else {"boot": boot}))
    except KeyboardInterrupt as e:
        add_note(e, _cut_short(path, "SIGTERM" if exit_code(e) == 143 else "Ctrl-C", t0))
        raise
    except Exception as e:  # noqa: BLE001 (a failed run: said, with what it recorded)
        print(f"  {args.system} {name}: failed: {e}", file=sys.stderr)
        print(f"  {_cut_short(path, type(e).__name__, t0)}", file=sys.stderr)
        return False
    finally:
        if watch is not None:
            print(f"  watch: exit {_watch_end(*watch)}")
    kinds = Counter(r["kind"] for r in log.records)
    faults = [f for r in log.records for f in r.get("x_fault", ())
              if not f["fault"].startswith("end ")]
    if faults:
        struck = Counter(f"{f['fault']} {f.get('role', '')}" for f in faults)
        print(f"  faults: {len(faults)} "
              f"({', '.join(f'{k} {v}' for k, v in sorted(struck.items()))})")
    print(f"  {path}: {len(log.records)} records "
          f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in "
          f"{time.monotonic() - t0:.1f} s")
    profile = system.guarantee(run)
    print(f"  check: tomkit check {' '.join(profile)} {path}")
    print(f"  {verdict(profile, path)}")
    return True


def _cut_short(path: Path, why: str, t0: float) -> str:
    """Write what the run stopped before its end recorded, whole records, as
    ``NAME.cut.jsonl.gz`` (its last record's ``x_cut_short`` says why), and say so; or
    say plainly that nothing was written, and why."""
    log = EventLog.latest
    secs = time.monotonic() - t0
    if path.exists() and path.stat().st_mtime >= time.time() - (time.monotonic() - t0):
        path.unlink()  # the recorder's own write, stopped part way: the cut file has all
    cut = path.with_name(path.name.replace(".jsonl.gz", ".cut.jsonl.gz"))
    stop = f"the run was stopped after {secs:.1f} s ({why})"
    if log is None or not log.records:
        return (f"nothing written: {stop}, before "
                f"{'the recorder began its log' if log is None else 'any event was logged'}")
    n = log.write(cut, cut_short=stop)
    return (f"wrote the {n:,} records recorded so far, each whole, to {cut}: {stop}, so "
            "its end-of-run properties (agreement, liveness) would judge a run that did "
            "not end (its last record says so in x_cut_short)")


def recorder(name: str) -> System:
    """The declaration of the system ``name`` (its recorder module's ``SYSTEM``)."""
    return importlib.import_module(f"tomkit.record.{name}.recorder").SYSTEM


def _watch(live: Path) -> tuple[subprocess.Popen, Path]:
    """Start ``tomkit watch`` on the run's live log (EventLog.live); it ends once the run
    is over (the stop file) and the log has been idle for a second."""
    stop = live.with_suffix(".done")
    for f in (live, stop):
        f.unlink(missing_ok=True)
    live.touch()
    EventLog.live = live
    cmd = [sys.executable, "-m", "tomkit", "watch", str(live), "--idle-exit", "1",
           "--stop-file", str(stop), "--summary-every", "10"]
    print(f"  watching: {' '.join(cmd[2:])}")
    # it dies with the recorder: a recorder killed (kill -9) never makes the stop file,
    # and the watch waited for it for ever. In a session of its own, a terminal's Ctrl-C
    # reaches the recorder alone, which ends the watch with its report of the records so
    # far (_watch_end): the watch stopped as it started printed a "Fatal Python error"
    return subprocess.Popen(cmd, preexec_fn=die_with_parent, start_new_session=True), stop


def _watch_end(proc: subprocess.Popen, stop: Path) -> int:
    EventLog.live = None
    stop.touch()
    try:
        return proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()
    except KeyboardInterrupt:  # a second Ctrl-C while the watch ends: not left running
        proc.kill()
        proc.wait()
        raise


def verdict(profile: list[str], path: Path) -> str:
    """One line: the documented profile's verdict on the run, with the first witness."""
    from tomkit.cli import main as tomkit_main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tomkit_main(["check", "-q", "--format", "json", *profile, str(path)])
    report = json.loads(out.getvalue())
    bad = [r for t in report["traces"] for r in t["results"] if r["verdict"] == "violated"
           and r["property"] in report.get("judged", [])]
    line = f"{report.get('guarantee') or profile[-1]}: {report['verdict']}"
    if bad:
        line += f" ({bad[0]['property']}: {bad[0]['explanation']})"
    return line


if __name__ == "__main__":
    sys.exit(main())
