"""``tomkit simulate-ack`` (and ``tomkit simulate --protocol abcast|tomp``): run the
ABCAST/TOMP simulator of model/acksim.py and write its trace.

Two entry points:

* :func:`add_parser` / :func:`run`: a subcommand of its own, whose options are those of
  ``tomkit simulate`` (model/simulate_cli.py) that apply to 004's protocols, plus
  ``--literal-counter`` (004's text without the counter raise; not a total order).
* :func:`run_ack`: takes the Namespace ``tomkit simulate`` parses, so that ``simulate``
  can hand ``--protocol abcast|tomp`` over (see :data:`PROTOCOLS`). Options of
  ``simulate`` that have no meaning here (``--delta``, ``--ack-timeout``,
  ``--detection-delay``) are ignored; ``--crash`` is refused, since 004 leaves failures
  out of both protocols (model/acksim.py).

The trace is written with :func:`tomkit.traces.writer.write_records`. Exit codes: 0
written, 2 bad arguments or output file.
"""

from __future__ import annotations

import argparse

from tomkit.cli.simulate import (
    add_network_arguments,
    add_output_arguments,
    simulate_and_write,
)
from tomkit.model.acksim import PROTOCOLS, AckSimConfig, simulate_ack
from tomkit.model.sim import Delay

__all__ = ["PROTOCOLS", "add_parser", "config_from_args", "run", "run_ack"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``simulate-ack`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "simulate-ack", help="simulate ABCAST or TOMP (paper 004) and write the trace",
        description="Discrete-event simulation of ABCAST or TOMP (paper 004) over FIFO "
        "links with random delays (001); writes a v1 trace that 'tomkit check' reads. "
        "Deliveries carry 004's latency split x_t1, x_t2 and the final timestamp.")
    s.add_argument("--protocol", choices=sorted(PROTOCOLS), default="tomp")
    add_network_arguments(s)
    s.add_argument("--literal-counter", dest="raise_counter", action="store_false",
                   help="004's literal text: the counter only counts receptions and never "
                   "moves past a final timestamp (NOT a total order; for checker demos)")
    add_output_arguments(s)
    s.set_defaults(func=run)
    return s


def config_from_args(args: argparse.Namespace) -> AckSimConfig:
    """The :class:`AckSimConfig` the parsed arguments (of ``simulate-ack`` or of
    ``simulate``) describe (raises ValueError)."""
    if getattr(args, "crash", None):
        raise ValueError("--crash: ABCAST and TOMP have no failure handling in 004 "
                         "(section 2.1.2, 3.2.1), so the simulator has no crashes")
    return AckSimConfig(
        protocol=args.protocol, n=args.n, source=args.source, rate=args.rate,
        jitter=args.jitter, messages=args.messages,
        delay=Delay(args.delay, args.mean_delay, cv2=args.gamma_cv2),
        raise_counter=getattr(args, "raise_counter", True), seed=args.seed,
        trace_id=getattr(args, "trace_id", "sim"))


def run(args: argparse.Namespace) -> int:
    """``simulate-ack``: the same as :func:`run_ack`."""
    return run_ack(args)


def run_ack(args: argparse.Namespace) -> int:
    """Simulate, write the trace, print the seed and a summary; the exit code."""
    done = simulate_and_write(args, config_from_args, simulate_ack)
    if isinstance(done, int):
        return done
    cfg, result, count = done
    st = result.stats
    counter = "" if cfg.raise_counter else " counter=literal (not a total order)"
    print(f"{cfg.protocol} n={cfg.n} source={cfg.source} rate={cfg.rate:g}/s "
          f"delay={cfg.delay.kind} mean={cfg.delay.mean:g}s{counter}")
    print(f"sent {st['sends']} messages ({st['acks']} acknowledgements, {st['finals']} "
          f"final timestamps), {st['deliveries']} deliveries, {st['undelivered']} "
          f"undelivered")
    print(f"mean latency {st['mean_latency'] * 1000:.3f} ms = t1 {st['mean_t1'] * 1000:.3f}"
          f" + t2 {st['mean_t2'] * 1000:.3f} ms (004 Figure 2); send to delivery "
          f"{st['mean_end_to_end'] * 1000:.3f} ms; {st['raised']} timestamps raised")
    print(f"simulated {st['sim_time']:.3f} s in {st['wall_time']:.2f} s; wrote {count} "
          f"records to {args.out}")
    return 0
