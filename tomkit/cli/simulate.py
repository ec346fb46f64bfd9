"""``tomkit simulate``: run the ToTo-family network simulator and write its trace.

The model is described in ``model/sim.py`` (after 000 section 6 and 001 section 3).
The trace is written with
:func:`tomkit.traces.writer.write_records` (JSON Lines, plain or gzip, or Parquet, by the
file's suffix), so ``tomkit check FILE`` reads it back. Exit codes: 0 written, 2 bad
arguments or output file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from tomkit.model.acksim import PROTOCOLS as ACK_PROTOCOLS
from tomkit.model.rules import RULES
from tomkit.model.sim import DELAYS, SOURCES, Delay, SimConfig, simulate

__all__ = ["add_parser", "config_from_args", "run", "simulate_and_write"]

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


def add_network_arguments(s: argparse.ArgumentParser) -> None:
    """The options every simulator shares: processes, sources and link delays."""
    s.add_argument("--n", type=int, default=8, help="number of processes (default 8)")
    s.add_argument("--source", choices=SOURCES, default="poisson")
    s.add_argument("--rate", type=float, default=100.0,
                   help="application messages per second, per process (default 100)")
    s.add_argument("--jitter", type=float, default=0.05,
                   help="quasi-periodic jitter, std. dev. as a fraction of the period")
    s.add_argument("--messages", type=int, default=4000,
                   help="total application messages (default 4000)")
    s.add_argument("--delay", choices=DELAYS, default="exponential",
                   help="link delay distribution (gamma: 001's shifted gamma)")
    s.add_argument("--mean-delay", type=float, default=0.001, metavar="SECONDS")
    s.add_argument("--gamma-cv2", type=float, default=0.05,
                   help="gamma delay: variance / mean^2 (default 0.05, 001's LAN)")


def add_output_arguments(s: argparse.ArgumentParser) -> None:
    """Seed, trace id, output file and progress, as every simulator takes them."""
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--trace-id", default="sim")
    s.add_argument("--out", required=True, metavar="FILE",
                   help=".jsonl, .jsonl.gz or .parquet")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "simulate", help="simulate a ToTo-family protocol on a network and write its trace",
        description="Discrete-event simulation of all-ack, ToTo, S-ToTo, G-ToTo or GL-ToTo "
        "(papers 000, 002) over FIFO links with random delays (001); writes a v1 trace "
        "that 'tomkit check' reads.")
    s.add_argument("--protocol", choices=sorted(RULES) + sorted(ACK_PROTOCOLS),
                   default="toto",
                   help="a ToTo-family rule (000, 002), or abcast / tomp (004, model/acksim.py)")
    add_network_arguments(s)
    s.add_argument("--delta", type=int, default=None,
                   help="the rule's delta (default ceil(n/2), i.e. 4 for n = 8)")
    s.add_argument("--crash", action="append", type=_crash, default=[], metavar="P@TIME",
                   help="process P (p0 .. p{n-1}) crashes at TIME seconds; repeatable")
    s.add_argument("--detection-delay", type=float, default=0.05, metavar="SECONDS",
                   help="from a crash to the Crash(q) event at the others (default 0.05)")
    s.add_argument("--ack-timeout", type=float, default=None, metavar="SECONDS",
                   help="idle time before an ACK-only message (default 5 / rate)")
    add_output_arguments(s)
    s.set_defaults(func=run)
    return s


def config_from_args(args: argparse.Namespace) -> SimConfig:
    """The :class:`SimConfig` the parsed arguments describe (raises ValueError)."""
    return SimConfig(
        protocol=args.protocol, n=args.n, delta=args.delta, source=args.source,
        rate=args.rate, jitter=args.jitter, messages=args.messages,
        delay=Delay(args.delay, args.mean_delay, cv2=args.gamma_cv2),
        crashes=tuple(args.crash), detection_delay=args.detection_delay,
        ack_timeout=args.ack_timeout, seed=args.seed, trace_id=args.trace_id)


def simulate_and_write(args: argparse.Namespace, make_config: Callable, sim: Callable
                       ) -> tuple[Any, Any, int] | int:
    """What both simulators' commands do: build the config, print the seed, simulate with
    a progress bar on long runs (on a terminal), write the trace. Returns (config, result,
    records written), or exit code 2 with the error printed."""
    from tomkit.traces.writer import output_format, write_records

    try:
        output_format(args.out)
        cfg = make_config(args)
    except ValueError as e:
        print(f"tomkit simulate: {e}", file=sys.stderr)
        return 2
    bar = None
    if (not getattr(args, "quiet", False) and cfg.messages >= PROGRESS_FROM
            and sys.stderr.isatty()):
        from tqdm import tqdm

        bar = tqdm(total=cfg.messages, unit="msg", desc="simulate", file=sys.stderr)
    print(f"seed {cfg.seed}")
    try:
        result = sim(cfg, progress=bar.update if bar is not None else None)
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
    return cfg, result, count


def run(args: argparse.Namespace) -> int:
    """Simulate, write the trace, print the seed and a summary; the exit code."""
    if args.protocol in ACK_PROTOCOLS:
        from tomkit.cli.simulate_ack import run_ack

        return run_ack(args)
    done = simulate_and_write(args, config_from_args, simulate)
    if isinstance(done, int):
        return done
    cfg, result, count = done
    st = result.stats
    delta = cfg.delta if cfg.delta is not None else (cfg.n + 1) // 2
    print(f"{cfg.protocol} n={cfg.n} delta={delta} source={cfg.source} rate={cfg.rate:g}/s "
          f"delay={cfg.delay.kind} mean={cfg.delay.mean:g}s")
    print(f"sent {st['sends']} messages ({st['acks']} ACK-only), {st['deliveries']} "
          f"deliveries, {st['undelivered']} undelivered at surviving processes")
    print(f"mean index of latency {st['mean_index_of_latency']:.3f}, mean latency "
          f"{st['mean_latency'] * 1000:.3f} ms, mean candidate set {st['mean_width']:.3f}")
    print(f"simulated {st['sim_time']:.3f} s in {st['wall_time']:.2f} s; wrote {count} "
          f"records to {args.out}")
    return 0
