"""``tomkit simulate --protocol P``: run any protocol in the one network simulator
(``model/sim.py``, after 000 section 6 and 001 section 3) and write its trace.

The protocol's own options (``--delta`` and ``--rule`` of the ToTo family, ``--variant``
of ABCAST and TOMP, ...) come from its declaration (``model/protocols.py``). The trace is
written with :func:`tomkit.traces.writer.write_records` (JSON Lines, plain or gzip, or
Parquet, by the file's suffix), so ``tomkit check FILE`` reads it back. Exit codes: 0
written, 2 bad arguments or output file.
"""

from __future__ import annotations

import argparse
import sys

from tomkit.cli.common import (
    add_network_arguments,
    add_output_arguments,
    add_protocol_arguments,
    protocol_options,
)
from tomkit.model.network import Delay
from tomkit.model.protocols import protocol
from tomkit.model.sim import SimConfig, simulate

__all__ = ["add_parser", "config_from_args", "run"]

#: runs with at least this many messages get a progress bar (when stderr is a tty)
PROGRESS_FROM = 2000


def _crash(text: str) -> tuple[str, float]:
    proc, sep, when = text.partition("@")
    try:
        t = float(when)
    except ValueError:
        t = float("nan")
    if not sep or not proc or not t >= 0:
        raise argparse.ArgumentTypeError(f"expected PROCESS@TIME (e.g. p3@0.5), got {text!r}")
    return proc, t


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "simulate", help="simulate a protocol on a network and write its trace",
        description="Discrete-event simulation of any protocol model (the ToTo family of "
        "papers 000 and 002, ABCAST and TOMP of 004) over FIFO links with random delays "
        "(001); writes a v1 trace that 'tomkit check' reads and 'tomkit conform' replays.")
    add_protocol_arguments(s)
    add_network_arguments(s)
    s.add_argument("--crash", action="append", type=_crash, default=[], metavar="P@TIME",
                   help="process P (p0 .. p{n-1}) crashes at TIME seconds; repeatable "
                   "(protocols that handle crashes)")
    s.add_argument("--detection-delay", type=float, default=0.05, metavar="SECONDS",
                   help="from a crash to the Crash(q) event at the others (default 0.05)")
    add_output_arguments(s)
    s.set_defaults(func=run)
    return s


def config_from_args(args: argparse.Namespace) -> SimConfig:
    """The :class:`SimConfig` the parsed arguments describe (raises ValueError)."""
    p = protocol(args.protocol)
    return SimConfig(
        protocol=args.protocol, n=args.n, options=protocol_options(args, p),
        source=args.source, rate=args.rate, jitter=args.jitter, messages=args.messages,
        delay=Delay(args.delay, args.mean_delay, cv2=args.gamma_cv2),
        crashes=tuple(args.crash), detection_delay=args.detection_delay, seed=args.seed,
        trace_id=args.trace_id)


def run(args: argparse.Namespace) -> int:
    """Simulate, write the trace, print the seed and a summary; the exit code."""
    from tomkit.traces.writer import output_format, write_records

    try:
        output_format(args.out)
        cfg = config_from_args(args)
    except ValueError as e:
        print(f"tomkit simulate: {e}", file=sys.stderr)
        return 2
    bar = None
    if not args.quiet and cfg.messages >= PROGRESS_FROM and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=cfg.messages, unit="msg", desc="simulate", file=sys.stderr)
    print(f"seed {cfg.seed}")
    try:
        result = simulate(cfg, progress=bar.update if bar is not None else None)
    except ValueError as e:
        print(f"tomkit simulate: {e}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    try:
        count = write_records(args.out, result.records, grouped=True)
    except OSError as e:
        print(f"tomkit simulate: cannot write {args.out}: {e}", file=sys.stderr)
        return 2
    p, st = protocol(cfg.protocol), result.stats
    opts = " ".join(f"{k}={v}" for k, v in result.options.items()
                    if v is not None and not (k == "control_records" and v))
    print(f"{cfg.protocol} n={cfg.n}{' ' + opts if opts else ''} source={cfg.source} "
          f"rate={cfg.rate:g}/s delay={cfg.delay.kind} mean={cfg.delay.mean:g}s")
    for line in (p.describe(st, result.options) if p.describe else
                 [f"sent {st['sends']} messages, {st['deliveries']} deliveries"]):
        print(line)
    print(f"simulated {st['sim_time']:.3f} s in {st['wall_time']:.2f} s; wrote {count} "
          f"records to {args.out}")
    return 0
