"""A small data set scanned as a user runs it: ``tomkit scan DIR --out OUT`` end to end, with
each engine, in the same run, and the ratios to the default.

The data set is ``tomkit generate --traces 40 --faulty 0.1 --seed 7`` (4,416 records: the
40-trace set of issue 30; ``--traces 2000``: 217,369 records), unless ``--data`` names
another. Each round runs, one after
another and in a fresh process each (JVM start, imports and all):

* ``files``: the default (at most 64 MB of local files: scanned in the ``tomkit scan``
  process, no Spark);
* ``files --spark``: the same engine on Spark local[*];
* ``sql``: ``--engine sql`` (Spark's DataFrame windows and joins);

and prints wall seconds and CPU seconds of the whole process tree (the JVM and Spark's
Python workers included: this process is their subreaper, so they are waited for and
counted even after ``tomkit scan`` exits), then per round the ratios sql / files and
sql / files on Spark. CPU seconds are the figure to compare on a loaded machine. Every
run's report must give the same verdict counts. Issue 30's targets: files under 10 s
end to end, sql within 2x of the files engine.

``--before TOMKIT`` also runs each Spark engine with another ``tomkit`` command (that of
a checkout of the code before a change, in its own environment), right after the same
engine of this one, and prints the ratios now / before: a change measured before and
after in one run, under the same load.

``--cds DIR`` also runs each Spark engine with a class data archive
(``TOMKIT_SPARK_CDS=DIR``, checker/spark/session.py), right after the same engine
without; an engine's archive missing from DIR is made first by one run that is not
counted (and whose CPU seconds are printed: what the first run with the archive costs).

    nice -n 10 .venv/bin/python bench/scan_small.py [--rounds 2] [--traces 40 | --data DIR]
        [--engines files,files-spark,sql] [--before OTHER/.venv/bin/tomkit] [--cds DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36
SEED = 7
RUNS = {
    "files": [],
    "files-spark": ["--spark"],
    "sql": ["--engine", "sql"],
}


def tomkit() -> list[str]:
    """The ``tomkit`` command of this interpreter's environment."""
    return [os.path.join(os.path.dirname(sys.executable), "tomkit")]


def reap_all(deadline: float) -> None:
    """Wait for every orphan left to this subreaper (a JVM ends a little after its Python
    driver), so that its CPU time is in RUSAGE_CHILDREN."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                raise SystemExit("a process of the scan is still running after 120 s")
            time.sleep(0.05)


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, dict]:
    """Wall and CPU seconds (the whole tree) of ``cmd``; its JSON report."""
    before = os.times()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    wall = time.perf_counter() - t
    reap_all(time.monotonic() + 120)
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    if p.returncode not in (0, 1, 2):
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return wall, cpu, json.loads(p.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data", default=None, help="a data set (default: generate --traces)")
    ap.add_argument("--traces", type=int, default=40,
                    help="traces of the generated data set (default 40)")
    ap.add_argument("--engines", default=",".join(RUNS),
                    help=f"comma list of {', '.join(RUNS)}")
    ap.add_argument("--before", default=None, metavar="TOMKIT",
                    help="also run the Spark engines with this tomkit command (the code "
                         "before a change), for ratios now / before")
    ap.add_argument("--cds", default=None, metavar="DIR",
                    help="also run the Spark engines with a class data archive in DIR "
                         "(TOMKIT_SPARK_CDS), made first if missing")
    args = ap.parse_args(argv)
    runs = [x.strip() for x in args.engines.split(",") if x.strip()]
    bad = [x for x in runs if x not in RUNS]
    if bad or "files" not in runs:
        ap.error(f"--engines: files and any of {', '.join(RUNS)} (not {', '.join(bad)})")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("prctl(PR_SET_CHILD_SUBREAPER) failed: the JVM's CPU time would be "
                         "lost")
    work = tempfile.mkdtemp(prefix="scan-small-")
    try:
        data = args.data
        if data is None:
            data = os.path.join(work, "d40")
            subprocess.run([*tomkit(), "generate", "--traces", str(args.traces), "--faulty", "0.1",
                            "--seed", str(SEED), "--out", data, "--quiet"], check=True,
                           capture_output=True)
        print(f"data {args.data or f'{args.traces} traces, tomkit generate --seed {SEED}'}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"{'round':>5} {'engine':>18} {'wall s':>7} {'cpu s':>6} {'load':>5}", flush=True)
        counts = None
        ratios: dict[str, list[tuple[float, float]]] = {}
        cds = {"TOMKIT_SPARK_CDS": os.path.abspath(args.cds)} if args.cds else None
        if cds:
            for name in runs:
                engine = "sql" if name == "sql" else "files"
                if name != "files" and not glob.glob(os.path.join(args.cds,
                                                                  f"*-{engine}-*.jsa")):
                    out = os.path.join(work, "out-cds")
                    wall, cpu, _ = run([*tomkit(), "scan", data, "--out", out, "--json",
                                        *RUNS[name]], cds)
                    print(f"{'-':>5} {name + ' writes the archive':>18} {wall:>7.1f} "
                          f"{cpu:>6.1f}", flush=True)
        for r in range(args.rounds):
            got = {}
            for name in runs:
                commands = [(name, tomkit(), None)]
                if args.before and name != "files":
                    commands.append((f"{name}@before", [args.before], None))
                if cds and name != "files":
                    commands.append((f"{name}+cds", tomkit(), cds))
                for label, cmd, env in commands:
                    out = os.path.join(work, f"out-{name}")
                    shutil.rmtree(out, ignore_errors=True)
                    wall, cpu, doc = run([*cmd, "scan", data, "--out", out, "--json",
                                          *RUNS[name]], env)
                    c = [(g["protocol"], g["config"], g["counts"]) for g in doc["groups"]]
                    if counts is not None and c != counts:
                        raise SystemExit(f"{label}: the verdict counts differ from files'")
                    counts = c
                    got[label] = (wall, cpu)
                    print(f"{r:>5} {label:>18} {wall:>7.1f} {cpu:>6.1f} "
                          f"{os.getloadavg()[0]:>5.1f}", flush=True)
            pairs = [(a, b) for a in got for b in ("files", "files-spark")
                     if a not in ("files", b) and b in got and "@" not in a and "+" not in a]
            pairs += [(a, f"{a}@before") for a in got if f"{a}@before" in got]
            pairs += [(f"{a}@before", "files-spark@before") for a in got
                      if a != "files-spark" and f"{a}@before" in got
                      and "files-spark@before" in got]
            pairs += [(f"{a}+cds", a) for a in got if f"{a}+cds" in got]
            pairs += [(f"{a}+cds", "files-spark+cds") for a in got
                      if a != "files-spark" and f"{a}+cds" in got and "files-spark+cds" in got]
            for a, b in pairs:
                ratios.setdefault(f"{a} / {b}", []).append(
                    (got[a][0] / got[b][0], got[a][1] / got[b][1]))
        print("ratios per round (wall, cpu):")
        for k, v in ratios.items():
            print(f"  {k:>34}: " + ", ".join(f"{w:.1f}x wall {c:.1f}x cpu" for w, c in v))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
