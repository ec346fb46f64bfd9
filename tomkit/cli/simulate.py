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
import math
import os
import sys
from collections.abc import Callable
from typing import Any

from tomkit.checker.pandas_guard import refuse
from tomkit.cli.common import (
    add_network_arguments,
    add_output_arguments,
    add_protocol_arguments,
    protocol_options,
)
from tomkit.cli.parser import not_a_file_out
from tomkit.cli.sizes import RECORD_BYTES, show_bytes
from tomkit.model.events import EVENTS, PLURAL, PROCESS_EVENTS, parse_at, parse_renegotiation
from tomkit.model.net.links import Delay
from tomkit.model.protocols import PROTOCOLS, protocol
from tomkit.model.sim import SimConfig, check_config, simulate

__all__ = ["add_membership_arguments", "add_parser", "beyond_memory", "config_from_args",
           "prepare_process", "run"]

#: runs with at least this many messages get a progress bar (when stderr is a tty)
PROGRESS_FROM = 2000


def _at(flag: str) -> Callable[[str], list[tuple[str, float]]]:
    """The type of a process event's flag: ``P@TIME[,P@TIME...]``."""
    def parse(text: str) -> list[tuple[str, float]]:
        try:
            return parse_at(flag, text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix(f"{flag}: ")) from None
    return parse


def _partition(text: str) -> tuple[float, tuple[tuple[str, ...], ...]]:
    """``TIME:P,P[/P,P...]``: at TIME the network splits into these groups (the processes
    not listed form one more)."""
    when, sep, groups = text.partition(":")
    try:
        t = float(when)
    except ValueError:
        t = float("nan")
    comps = tuple(tuple(p.strip() for p in g.split(",")) for g in groups.split("/"))
    if not sep or not (t >= 0 and math.isfinite(t)) or any(not p for c in comps for p in c):
        raise argparse.ArgumentTypeError(
            f"expected TIME:P,P[/P,P...] (e.g. 0.1:p0,p1,p2), got {text!r}")
    return t, comps


def _renegotiation(text: str) -> tuple[str, float, tuple[int, int]]:
    try:
        return parse_renegotiation("--renegotiate", text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _heal(text: str) -> float:
    try:
        t = float(text)
    except ValueError:
        t = float("nan")
    if not (t >= 0 and math.isfinite(t)):
        raise argparse.ArgumentTypeError(f"expected a TIME >= 0 in seconds, got {text!r}")
    return t


#: the old spellings of the schedule (qos's options), each kept as a deprecated flag
DEPRECATED = {"--joins": "join", "--leaves": "leave", "--recovers": "recover"}


def add_membership_arguments(s: argparse.ArgumentParser) -> None:
    """The membership schedule, one flag per event of ``model/events.py`` (one meaning
    each; a protocol refuses the events it does not honour)."""
    g = s.add_argument_group(
        "membership schedule (one meaning per event, every protocol; a protocol refuses "
        "the events it does not honour: docs/membership.md)")
    def honoured(kind: str) -> str:
        return " (honoured by " + ", ".join(
            p.name for p in PROTOCOLS.values() if p.honours(kind)) + ")"

    for kind in PROCESS_EVENTS:
        flag = "--" + kind
        g.add_argument(flag, action="extend", type=_at(flag), default=[],
                       dest=PLURAL[kind], metavar="P@TIME",
                       help=f"{EVENTS[kind]}; repeatable, or P@TIME,P@TIME{honoured(kind)}")
    g.add_argument("--partition", action="append", type=_partition, default=[],
                   dest="partitions", metavar="TIME:P,P[/P,P...]",
                   help=f"{EVENTS['partition']}; repeatable{honoured('partition')}")
    g.add_argument("--heal", action="append", type=_heal, default=[], dest="heals",
                   metavar="TIME", help=f"{EVENTS['heal']}; repeatable{honoured('heal')}")
    g.add_argument("--renegotiate", action="append", type=_renegotiation, default=[],
                   dest="renegotiations", metavar="P@TIME=AVG/MAX",
                   help=f"{EVENTS['renegotiate']}; repeatable{honoured('renegotiate')}")
    for flag, kind in DEPRECATED.items():
        g.add_argument(flag, action="extend", type=_at(flag), default=[],
                       dest="old_" + PLURAL[kind], metavar="P@T,P@T",
                       help=f"deprecated: --{kind}")
    s.add_argument("--detection-delay", type=float, default=0.05, metavar="SECONDS",
                   help="from a crash to the Crash(q) event at the others, or to the "
                   "membership service's notice of any event (default 0.05)")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "simulate", help="simulate a protocol on a network and write its trace",
        description="Discrete-event simulation of any protocol model (the ToTo family of "
        "papers 000 and 002, ABCAST and TOMP of 004) over FIFO links with random delays "
        "(001); writes a v1 trace that 'tomkit check' reads and 'tomkit conform' replays.")
    add_protocol_arguments(s)
    add_network_arguments(s)
    add_membership_arguments(s)
    # 001 (Rodrigues, Fonseca, Verissimo) sections 3, 4.4 and 6.2: model/net/topology.py and
    # model/net/load.py
    s.add_argument("--topology", metavar="FILE.toml|PRESET",
                   help="a delay distribution per process pair, from a TOML file or a "
                   "preset (001-fig3: 001's two LANs A B C / D E, 20 ms and 520 ms); sets "
                   "--n; --delay applies to no link then; fills a protocol's --delays")
    s.add_argument("--load-schedule", metavar="FILE.toml|PRESET",
                   help="per-process rates changing over time (replaces --rate for the "
                   "sources), from a TOML file or a preset: 001-fig3:S (scenario S = 1..9 "
                   "for 20 s), 001-fig5[:DWELL] (the nine in sequence, 20 s each); its first "
                   "rates fill a protocol's --rates")
    add_output_arguments(s)
    s.set_defaults(func=run)
    return s


def config_from_args(args: argparse.Namespace) -> SimConfig:
    """The :class:`SimConfig` the parsed arguments describe (raises ValueError)."""
    p = protocol(args.protocol)
    topology, load = _topology_and_load(args)
    n = topology.n if topology is not None else args.n
    schedule = _membership(args, n)
    options = protocol_options(args, p)
    # a protocol that reads the network's mean delays or the processes' rates (the
    # hybrid's Figure 2 heuristic, 001 section 4.3) gets them from --topology and
    # --load-schedule unless given: the schedule's first rates (a silent process: the
    # lowest rate of the schedule)
    if topology is not None and p.option("delays") and "delays" not in options:
        options["delays"] = topology.means()
    if load is not None and p.option("rates") and "rates" not in options:
        low = min((r for _, rates in load.steps for r in rates if r > 0), default=1.0)
        options["rates"] = [r if r > 0 else low for r in load.steps[0][1]]
    return SimConfig(
        protocol=args.protocol, n=n,
        topology=topology, load=load, options=options,
        source=args.source, rate=args.rate, jitter=args.jitter, messages=args.messages,
        delay=Delay(args.delay, args.mean_delay, cv2=args.gamma_cv2),
        detection_delay=args.detection_delay, seed=args.seed, trace_id=args.trace_id,
        **schedule)


class _Names:
    """The process names p0 .. p(n-1), as a set answers ``in``: a set of them made for
    --n 99999999999999999999 ran until killed, before the size was judged."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name[1:].isdigit() and \
            name == f"p{int(name[1:])}" and int(name[1:]) < self.n


def _membership(args: argparse.Namespace, n: int) -> dict[str, Any]:
    """The membership schedule's fields of :class:`SimConfig` from the flags (the
    deprecated ones said so on stderr); ValueError naming the flag and an unknown
    process."""
    out: dict[str, Any] = {PLURAL[k]: list(getattr(args, PLURAL[k], None) or ())
                           for k in PROCESS_EVENTS}
    for flag, kind in DEPRECATED.items():
        old = getattr(args, "old_" + PLURAL[kind], None)
        if old:
            print(f"tomkit simulate: {flag} is deprecated: --{kind} P@TIME (repeatable; "
                  "docs/membership.md)", file=sys.stderr)
            out[PLURAL[kind]] += old
    out["partitions"] = list(getattr(args, "partitions", None) or ())
    out["heals"] = list(getattr(args, "heals", None) or ())
    out["renegotiations"] = list(getattr(args, "renegotiations", None) or ())
    names = _Names(n)
    for kind in PROCESS_EVENTS:
        for q, _ in out[PLURAL[kind]]:
            if q not in names:
                raise ValueError(f"--{kind}: unknown process {q!r} (processes are p0 .. "
                                 f"p{n - 1})")
    for q, _, _ in out["renegotiations"]:
        if q not in names:
            raise ValueError(f"--renegotiate: unknown process {q!r} (processes are p0 .. "
                             f"p{n - 1})")
    for _, groups in out["partitions"]:
        for q in (q for g in groups for q in g):
            if q not in names:
                raise ValueError(f"--partition: unknown process {q!r} (processes are p0 "
                                 f".. p{n - 1})")
    return out


def _topology_and_load(args: argparse.Namespace) -> tuple[Any, Any]:
    """--topology and --load-schedule: a TOML file or a preset name (ValueError naming
    the file, line and field)."""
    from tomkit.model.net.load import LOAD_PRESETS, load_preset, read_load_schedule
    from tomkit.model.net.topology import TOPOLOGY_PRESETS, read_topology, topology_preset

    topology = load = None
    for flag, spec, presets in (("--topology", getattr(args, "topology", None),
                                 TOPOLOGY_PRESETS),
                                ("--load-schedule", getattr(args, "load_schedule", None),
                                 LOAD_PRESETS)):
        if spec and spec.partition(":")[0] not in presets and not os.path.isfile(spec):
            raise ValueError(f"{flag} {spec}: neither a preset ({', '.join(presets)}) nor "
                             "a file")
    if getattr(args, "topology", None):
        topology = (topology_preset(args.topology) if args.topology in TOPOLOGY_PRESETS
                    else read_topology(args.topology))
    if getattr(args, "load_schedule", None):
        spec = args.load_schedule
        n = topology.n if topology is not None else args.n
        load = (load_preset(spec) if spec.partition(":")[0] in LOAD_PRESETS
                else read_load_schedule(spec, n))
        if load.n != n:
            raise ValueError(f"--load-schedule {spec} is for {load.n} processes, the run "
                             f"has {n}")
    return topology, load


#: bytes the simulator's per-pair tables take at the least (three n x n lists of
#: references: delays, last arrivals, the other processes)
PAIR_BYTES = 24


def beyond_memory(n: int, messages: int, *, crashes: bool = False,
                  memory: int | None = None, given: str | None = None) -> str | None:
    """Why a run of ``n`` processes and ``messages`` cannot fit in this machine's memory
    (``memory`` bytes; default: all of it), from lower bounds: the simulator keeps the
    whole trace in memory until it writes it, at least a send and, without crashes, n
    deliveries per message; and its per-pair tables. None when it may fit (it may still
    be slow). A huge number is a typo far more often than a wish. ``given`` names the
    settings as the caller took them (default: the command's flags)."""
    if memory is None:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    records = messages * (1 if crashes else n + 1)
    need = records * RECORD_BYTES + PAIR_BYTES * n * n
    if need <= memory:
        return None
    given = given or f"--n {n} --messages {messages}"
    return (f"{given}: the simulator keeps its whole trace in memory, "
            f"at least {records:,} records and {n}x{n} link tables, about {show_bytes(need)}, "
            f"and this machine has {show_bytes(memory)}; simulate fewer (tomkit generate "
            "writes a data set of many runs)")


def prepare_process(args: argparse.Namespace) -> None:
    """Settings of the ``tomkit simulate`` process, before the writer loads pyarrow: its
    probe for pandas (a third of a second of CPU, only to ask whether the records are
    pandas objects, which they never are; tomkit.checker.pandas_guard) is refused, unless
    the run loads the user's own code (``--rule module:function``), which may use pandas.
    Only the command's own process (``tomkit/cli/__init__.py: main``)."""
    if ":" not in str(getattr(args, "rule", None) or ""):
        refuse()


def run(args: argparse.Namespace) -> int:
    """Simulate, write the trace, print the seed and a summary; the exit code."""
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.interrupt import add_note
    from tomkit.traces.writer import output_format, write_records

    try:
        if not args.out:  # an unset shell variable, say; not ": cannot tell the format"
            raise ValueError("--out is an empty name; give a file name")
        if not args.trace_id:  # the writer refused it after the simulation, a traceback
            raise ValueError("--trace-id must not be empty")
        try:  # a byte that is no UTF-8 (the shell's $'\xff'): a traceback from the writer
            args.trace_id.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(args.trace_id).decode("utf-8", "backslashreplace")
            raise ValueError(f"--trace-id {shown}: not UTF-8 text; a trace id is written "
                             "in the trace, which is UTF-8") from None
        output_format(args.out)
        if os.path.isdir(args.out):  # found before the simulation, not after it
            raise ValueError(f"--out {args.out}: a folder; give a file name")
        if not_a_file_out("--out", args.out):  # a pipe: waited for a reader, and a stop
            # then removed it
            raise ValueError(not_a_file_out("--out", args.out))
        # made now (as generate makes its own), so that a folder that cannot be
        # is found before the simulation, not after
        folder = os.path.dirname(os.path.abspath(args.out))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise ValueError(f"--out {args.out}: cannot make the folder {folder}: "
                             f"{e.strerror}") from None
        if args.seed < 0:  # numpy's seeds are >= 0; its own message names no flag
            raise ValueError(f"--seed must be >= 0, got {args.seed}")
        if args.messages < 1:
            raise ValueError(f"--messages must be at least 1, got {args.messages}: a run "
                             "without messages has no trace to write")
        # said by their flags, before the seed line (the model names its fields)
        if args.n < 2:
            raise ValueError(f"--n must be at least 2 processes, got {args.n}")
        for flag, value, kind in (("--rate", args.rate, "positive"),
                                  ("--mean-delay", args.mean_delay, "positive"),
                                  ("--gamma-cv2", args.gamma_cv2, "positive"),
                                  ("--jitter", args.jitter, "non-negative")):
            if not (math.isfinite(value) and (value > 0 or kind != "positive")
                    and value >= 0):
                raise ValueError(f"{flag} must be a {kind}, finite number, got {value}")
        cfg = config_from_args(args)
        too_big = beyond_memory(cfg.n, cfg.messages, crashes=bool(
            cfg.crashes or cfg.leaves or cfg.partitions))
        if too_big:
            raise ValueError(too_big)
        check_config(cfg)  # a protocol's option said before the seed line
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
    except KeyboardInterrupt as e:  # the trace is written after the simulation
        add_note(e, f"nothing written to {args.out}: stopped while simulating, before "
                 f"the trace is written (seed {cfg.seed})")
        raise
    finally:
        if bar is not None:
            bar.close()
    try:
        count = write_records(args.out, result.records, grouped=True)
    except OSError as e:
        print(f"tomkit simulate: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    except TraceFormatError as e:  # a record the writer refuses: one line, not a traceback
        print(f"tomkit simulate: cannot write {args.out}: {e}", file=sys.stderr)
        return 2
    p, st = protocol(cfg.protocol), result.stats
    opts = " ".join(f"{k}={v}" for k, v in result.options.items()
                    if v is not None and not (k == "control_records" and v))
    print(f"{cfg.protocol} n={cfg.n}{' ' + opts if opts else ''} source={cfg.source} "
          + (f"load={args.load_schedule} " if cfg.load is not None else
             f"rate={cfg.rate:g}/s ")
          + (f"topology={args.topology}" if cfg.topology is not None else
             f"delay={cfg.delay.kind} mean={cfg.delay.mean:g}s"))
    for line in (p.describe(st, result.options) if p.describe else
                 [f"sent {st['sends']} messages, {st['deliveries']} deliveries"]):
        print(line)
    if cfg.topology is not None or cfg.load is not None:
        from tomkit.model.hybrid.latency import latency_001

        lat = latency_001(result)
        print(f"001 latency (mean over messages of the last delivery): {lat.mean * 1e3:.1f} "
              f"ms over {lat.count} messages ({lat.incomplete} not delivered everywhere)")
    print(f"simulated {st['sim_time']:.3f} s in {st['wall_time']:.2f} s; wrote {count} "
          f"records to {args.out}")
    return 0
