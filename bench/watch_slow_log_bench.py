"""Benchmark of ``tomkit watch`` on per-process logs with one slow log (issue 27, part 3;
docs/stream.md, "`tomkit watch` and a slow log").

``--processes`` v1 JSON Lines logs, one per process, of one clean run of ``--messages``
messages: message i is sent by process i mod P, and every process delivers every message
in send order (each process's send logged right before its own delivery of it). The
logs of every process but the last grow in ``--rounds`` shares, a watch cycle after
each; the last process's log (a sender's) is written only after all of them, in as many
shares. So while it is late the FIFO pointer stops at its first message: before, the
window kept every position from there on and the other logs' records of them; now the
positions retire past the pointer once it is ``WATCH_AWAIT_AFTER`` behind, their sends
awaited on disk (canon.py), and the late process reads the retired prefix back from
disk. Each run is its own process (its peak memory, ru_maxrss, is its own): now, and as
before (``--no-await``, a hidden flag of the child: canon.AWAIT_SENDS off). Printed: CPU,
peak memory, records and positions held at most, and the exit code (0: every property
holds, as ``tomkit check`` says of the whole input). Machines here are noisy: read the
CPU seconds and the same-run ratios.

    python bench/watch_slow_log_bench.py [--messages 200000] [--processes 8]

``--smoke`` is the tiny form tests/bench/ runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def make_logs(d: Path, messages: int, processes: int) -> list[Path]:
    """One log per process (module docstring), written a process at a time."""
    paths = []
    for p in range(processes):
        path = d / f"slow-{processes}x{messages}-p{p}.jsonl"
        with open(path, "w") as f:
            for i in range(messages):
                if i % processes == p:
                    f.write(json.dumps({"trace": "run", "process": f"p{p}", "kind": "send",
                                        "msg": f"m{i}"}) + "\n")
                f.write(json.dumps({"trace": "run", "process": f"p{p}", "kind": "deliver",
                                    "msg": f"m{i}"}) + "\n")
        paths.append(path)
    return paths


def shares(path: Path, rounds: int) -> list[tuple[int, int]]:
    """Byte ranges of ``rounds`` shares of a log, each ending at a line's end."""
    size = path.stat().st_size
    out, start = [], 0
    with open(path, "rb") as f:
        for k in range(1, rounds + 1):
            end = size * k // rounds
            if end < size:
                f.seek(end)
                end += len(f.readline())
            out.append((start, end))
            start = end
    return out


def child(d: Path, messages: int, processes: int, rounds: int, no_await: bool,
          await_after: int | None) -> None:
    """One measured watch run, in this process: its figures as one JSON line."""
    import tomkit.checker.stream.canon as canon
    import tomkit.checker.stream.watch as watch
    from tomkit.checker.check_run import plan
    from tomkit.checker.properties import Options
    from tomkit.checker.stream.watch import Watch

    if await_after:  # the smoke's small runs: a margin they outgrow
        watch.WATCH_AWAIT_AFTER = await_after
    if no_await:  # as before: the window waits for the slow log's sends
        canon.AWAIT_SENDS = False
    t0 = time.perf_counter()
    src = [d / f"slow-{processes}x{messages}-p{p}.jsonl" for p in range(processes)]
    live = [d / f"live-{p}.jsonl" for p in range(processes)]
    for f in live:
        f.write_bytes(b"")
    parts = [shares(s, rounds) for s in src]
    with open(d / "verdicts.txt", "w") as out:
        w = Watch([str(f) for f in live], plan(Options()).properties, Options(), out=out)

        def write(p: int, k: int) -> None:
            a, b = parts[p][k]
            with open(src[p], "rb") as f_in, open(live[p], "ab") as f_out:
                f_in.seek(a)
                f_out.write(f_in.read(b - a))

        for k in range(rounds):
            for p in range(processes - 1):
                write(p, k)
            w.cycle()
        for k in range(rounds):
            write(processes - 1, k)
            w.cycle()
        run = w.run
        report = w.finish()
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"exit": report.exit_code(), "held": run.peak_held,
                      "window": run.peak_window, "modes": dict(run.modes),
                      "seconds": time.perf_counter() - t0, "rss_mb": use.ru_maxrss / 1024,
                      "cpu": use.ru_utime + use.ru_stime}), flush=True)


def measure(d: Path, messages: int, processes: int, rounds: int, no_await: bool,
            await_after: int | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(d),
           "--messages", str(messages), "--processes", str(processes),
           "--rounds", str(rounds)] + (["--no-await"] if no_await else []) + \
        (["--await-after", str(await_after)] if await_after else [])
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    fig = json.loads(res.stdout.strip().splitlines()[-1])
    label = "as before (the window waits)" if no_await else "now (the sends awaited)"
    print(f"  {label:<32} {fig['seconds']:8.2f} s {fig['cpu']:7.2f} s CPU "
          f"{fig['rss_mb']:6.0f} MB  held {fig['held']:>9,} records {fig['window']:>8,} "
          f"positions  exit {fig['exit']}", flush=True)
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="tomkit watch with one slow per-process log")
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--dir", default="out/bench-watch-slow")
    ap.add_argument("--smoke", action="store_true", help="a tiny run (tests/bench/)")
    ap.add_argument("--no-await", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--await-after", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(Path(args.child), args.messages, args.processes, args.rounds, args.no_await,
              args.await_after)
        return 0
    if args.smoke:
        args.messages, args.processes, args.rounds, args.await_after = 2000, 4, 4, 512
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    make_logs(d, args.messages, args.processes)
    print(f"watch_slow_log_bench: {args.processes} per-process logs of {args.messages:,} "
          f"messages ({args.messages * (args.processes + 1):,} events), p"
          f"{args.processes - 1}'s log (a sender's) written after the others'", flush=True)
    now = measure(d, args.messages, args.processes, args.rounds, False, args.await_after)
    before = measure(d, args.messages, args.processes, args.rounds, True, args.await_after)
    for f in (now, before):
        assert f["exit"] == 0 and f["modes"] == {"fast": 1}, f
    print(f"summary: now / before: CPU {now['cpu'] / before['cpu']:.2f}x, peak memory "
          f"{now['rss_mb'] / before['rss_mb']:.2f}x, held records "
          f"{now['held'] / before['held']:.3f}x, positions "
          f"{now['window'] / before['window']:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
