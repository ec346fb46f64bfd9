"""``tomkit run``: Maelstrom's ``test`` command, run by tomkit (``tomkit/maelstrom/``).

A command line from a Maelstrom tutorial works with ``./maelstrom test`` replaced by
``tomkit run``. Exit codes: 0 the run is valid, 1 invalid (a property violated or an
anomaly found), 2 bad usage or a node that could not be run (or broke the protocol).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

from tomkit.traces.interrupt import exit_code, stopped

from .parser import empty_name

__all__ = ["add_parser", "run"]


def _count(text: str) -> str:
    """Jepsen's concurrency: a number, or ``Kn`` (K times the node count)."""
    if text.endswith("n") and (text[:-1] == "" or text[:-1].isdigit()):
        return text
    if text.isdigit() and int(text) > 0:
        return text
    raise argparse.ArgumentTypeError(f"not a count or Kn: {text!r}")


def _availability(text: str) -> float:
    """Maelstrom's --availability: ``total`` or a fraction from 0 to 1."""
    if text == "total":
        return 1.0
    try:
        a = float(text)
    except ValueError:
        a = -1.0
    if not 0.0 <= a <= 1.0:
        raise argparse.ArgumentTypeError(f"not a fraction from 0 to 1 or total: {text!r}")
    return a


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from tomkit.maelstrom.nemesis import FAULTS
    from tomkit.maelstrom.network import DISTRIBUTIONS
    from tomkit.maelstrom.workloads import WORKLOADS
    from tomkit.maelstrom.workloads.topology import TOPOLOGIES

    r = subparsers.add_parser(
        "run", help="run a Maelstrom node program under a workload and faults, and judge it",
        description="Run the node program --bin under Maelstrom's protocol and workload "
        "-w, with the nemesis's faults, write the run folder (--out: node logs, history, "
        "trace, verdict) and judge it with tomkit's properties. Exit 0 valid, 1 invalid, 2 "
        "bad usage or a node that could not be run. See docs/maelstrom.md.")
    r.add_argument("-w", "--workload", required=True, choices=sorted(WORKLOADS))
    r.add_argument("--bin", required=True, nargs="+", metavar="FILE",
                   help="the node program, and its arguments (those not starting with -; "
                   "put others after --)")
    r.add_argument("node_args", nargs="*", metavar="-- ARG",
                   help="more arguments for the node program, after --")
    r.add_argument("--node-count", type=int, default=5)
    r.add_argument("--concurrency", type=_count, default="1n",
                   help="clients: a number, or Kn for K per node (default 1n)")
    r.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS")
    r.add_argument("--rate", type=float, default=5.0,
                   help="requests per second over all clients (0: as fast as answered)")
    r.add_argument("--latency", type=float, default=0.0, metavar="MILLIS",
                   help="mean network latency, ms")
    r.add_argument("--latency-dist", choices=DISTRIBUTIONS, default="constant")
    r.add_argument("--nemesis", default="", metavar="FAULTS",
                   help=f"comma-separated faults: {', '.join(FAULTS)}")
    r.add_argument("--nemesis-interval", type=float, default=10.0, metavar="SECONDS")
    r.add_argument("--topology", choices=TOPOLOGIES, default="grid")
    r.add_argument("--key-count", type=int, default=3, help="kafka: keys in use at once")
    r.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                   help="how long a client waits for a reply")
    r.add_argument("--recovery-time", type=float, default=2.0, metavar="SECONDS",
                   help="after healing, before the final reads")
    r.add_argument("--seed", type=int, default=None,
                   help="seed of every random choice (default: from the clock, printed)")
    r.add_argument("--out", default=None, metavar="DIR",
                   help="the run folder (default store/WORKLOAD-SEED)")
    r.add_argument("--availability", type=_availability, default=None, metavar="EXPECTED",
                   help="the fraction of operations that must succeed: a number from 0 to "
                   "1, or total (default: not checked)")
    r.add_argument("--log-stderr", action="store_true",
                   help="show each node's stderr here as it comes (it is always kept in "
                   "the run folder's nodes/)")
    r.add_argument("--format", "--output-format", choices=["text", "json"], default="text")
    r.set_defaults(func=run)
    return r


def run(args: argparse.Namespace) -> int:
    from tomkit.maelstrom.harness import HarnessError, RunConfig
    from tomkit.maelstrom.harness import run as run_test
    from tomkit.maelstrom.report import to_text

    from .verdict_json import document, dumps

    if args.node_count < 1:
        print("tomkit run: --node-count must be at least 1", file=sys.stderr)
        return 2
    bad = _bad_arguments(args)
    if bad:  # before the run folder is made
        print(f"tomkit run: {bad}", file=sys.stderr)
        return 2
    conc = args.concurrency
    clients = (int(conc[:-1] or 1) * args.node_count) if conc.endswith("n") else int(conc)
    faults = frozenset(f for f in (x.strip() for x in args.nemesis.split(",")) if f)
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    out = Path(args.out) if args.out else Path("store") / f"{args.workload}-{seed}"
    try:
        config = RunConfig(
            workload=args.workload, bin=args.bin + args.node_args,
            node_count=args.node_count,
            concurrency=clients, time_limit=args.time_limit, rate=args.rate,
            latency=args.latency, latency_dist=args.latency_dist, nemesis=faults,
            nemesis_interval=args.nemesis_interval, seed=seed, out=out,
            timeout=args.timeout, recovery=args.recovery_time, topology=args.topology,
            key_count=args.key_count, availability=args.availability,
            log_stderr=args.log_stderr)
        from tomkit.maelstrom.nemesis import FAULTS

        if faults - set(FAULTS):
            raise HarnessError(f"unknown nemesis {', '.join(sorted(faults - set(FAULTS)))}; "
                               f"known: {', '.join(FAULTS)}")
        print(f"tomkit run: {args.workload}, {args.node_count} nodes, {clients} clients, "
              f"seed {seed}, folder {out}", file=sys.stderr)
        result = run_test(config)
    except HarnessError as e:
        print(f"tomkit run: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # exit 130 (143 for SIGTERM), as every command
        print(f"tomkit run: {stopped(e)}; every node was stopped; {out} keeps the node logs "
              "so far (nodes/), and no trace, history or results: they are written when "
              "a run ends", file=sys.stderr)
        return exit_code(e)
    if args.format == "json":
        doc = result.to_dict()
        print(dumps(document(doc["verdict"], doc)))
    else:
        sys.stdout.write(to_text(result))
    return 0 if result.valid else 1


#: open files a node process costs the harness (its stdin, stdout and stderr pipes, and
#: its stderr log in the run folder)
FILES_PER_NODE = 4


def _bad_arguments(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line; None if nothing. A node program
    given as a file of this folder (``--bin node.sh``) is run as ``./node.sh``, as the
    user meant (a name without a slash is otherwise looked up on PATH)."""
    import resource
    import shutil

    prog = args.bin[0]
    empty = empty_name(("--bin", prog, "program"), ("--out", args.out, "folder"))
    if empty:  # --out '' ran into store/ as if none was given
        return empty
    if os.path.isdir(prog):
        return f"--bin {prog}: a folder, not a program"
    if os.path.isfile(prog):
        if not os.access(prog, os.X_OK):
            return f"--bin {prog}: not executable (chmod +x {prog})"
        if os.sep not in prog:  # Maelstrom's --bin is a file's path
            args.bin[0] = os.path.abspath(prog)
    elif shutil.which(prog) is None:
        return f"--bin {prog}: no such program (neither a file nor a command on PATH)"
    conc = args.concurrency
    count = conc[:-1] or "1" if conc.endswith("n") else conc
    if not count.isdigit() or int(count) < 1:
        return f"--concurrency must be a number N >= 1 or Kn (K per node), got {conc!r}"
    for flag, value, positive in (("--time-limit", args.time_limit, True),
                                  ("--nemesis-interval", args.nemesis_interval, True),
                                  ("--timeout", args.timeout, True),
                                  ("--rate", args.rate, False),
                                  ("--latency", args.latency, False),
                                  ("--recovery-time", args.recovery_time, False)):
        if not (0 < value < math.inf if positive else 0 <= value < math.inf):
            return f"{flag} must be {'> 0' if positive else '>= 0'}, got {value}"
    if args.key_count < 1:
        return f"--key-count must be at least 1, got {args.key_count}"
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        # a FileExistsError traceback from the harness's mkdir
        return f"--out {args.out}: a file; --out takes the run's folder"
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and args.node_count * FILES_PER_NODE > soft:
        return (f"--node-count {args.node_count}: a node costs {FILES_PER_NODE} open files "
                f"and this process may open {soft} (ulimit -n): at most "
                f"{soft // FILES_PER_NODE} nodes")
    return None
