"""What several subcommands share: a protocol and its declared options on the command
line (``simulate``, ``conform``, ``fuzz``), and the network and output options of a
simulation. Options come from the protocols' own declarations (``model/protocols.py``),
so no subcommand branches on a protocol's name."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from tomkit.model.net.links import DELAYS, SOURCES
from tomkit.model.process import Option, Protocol
from tomkit.model.protocols import PROTOCOLS

__all__ = ["add_network_arguments", "add_option_flag", "add_output_arguments",
           "add_protocol_arguments", "protocol_options"]


def _declared() -> dict[str, tuple[Option, list[str]]]:
    """Every option any protocol declares, with the protocols that take it."""
    out: dict[str, tuple[Option, list[str]]] = {}
    for p in PROTOCOLS.values():
        for o in p.options:
            if o.name in out:
                out[o.name][1].append(p.name)
            else:
                out[o.name] = (o, [p.name])
    return out


def _families(names: list[str]) -> str:
    return "all protocols" if len(names) == len(PROTOCOLS) else ", ".join(names)


def add_protocol_arguments(ap: argparse.ArgumentParser, *, required: bool = False,
                           default: str | None = "toto") -> None:
    """``--protocol`` and every protocol's own options, each saying which protocols take
    it (a given option the chosen protocol does not take is refused later)."""
    ap.add_argument("--protocol", choices=list(PROTOCOLS), required=required,
                    default=None if required else default,
                    help="; ".join(f"{p.name}: {p.title}" for p in PROTOCOLS.values()))
    g = ap.add_argument_group("protocol options (each protocol declares its own)")
    for o, takers in _declared().values():
        extra = ""
        if o.name == "variant":
            extra = " " + "; ".join(f"{p.name}: {', '.join(p.variants)}"
                                    for p in PROTOCOLS.values() if p.variants)
        add_option_flag(g, o, f" [{_families(takers)}]{extra}")


def _parse_with(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an argparse type: its ValueError's own words, not argparse's."""

    def parse_flag(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse_flag.__name__ = getattr(parse, "__name__", "value")
    return parse_flag


def add_option_flag(g: argparse._ActionsContainer, o: Option, where: str = "") -> None:
    """The flag of a declared option (a protocol's or a prover's), default None (not
    given): ``--name VALUE``; for a bool, ``--name`` or, when it defaults to True,
    ``--no-name``; repeatable when the default is a tuple. Allowed values are checked by
    the owner's ``resolve``, which names the owner."""
    if o.type is bool:
        if o.default:
            g.add_argument("--no-" + o.flag[2:], dest=o.name, action="store_false",
                           default=None, help=f"do not {o.help}{where}")
        else:
            g.add_argument(o.flag, dest=o.name, action="store_true", default=None,
                           help=o.help + where)
        return
    # a parser of our own speaks in its own words; int and float in argparse's
    typ = o.type if o.type in (int, float, str) else _parse_with(o.type)
    g.add_argument(o.flag, dest=o.name, type=typ, default=None,
                   action="append" if isinstance(o.default, tuple) else None,
                   metavar=o.name.upper(), help=o.help + where + (
                       f" (one of {', '.join(map(str, o.choices))})" if o.choices else ""))


def protocol_options(args: argparse.Namespace, protocol: Protocol) -> dict[str, Any]:
    """The options given on the command line for ``protocol``; ValueError for one it does
    not take."""
    given = {name: getattr(args, name) for name in _declared()
             if getattr(args, name, None) is not None}
    mine = {o.name for o in protocol.options}
    other = sorted(n for n in given if n not in mine)
    if other:
        flags = ", ".join("--" + n.replace("_", "-") for n in other)
        raise ValueError(f"{flags} does not apply to {protocol.name}")
    for o in protocol.options:
        if given.get(o.name) == "":  # an unset shell variable: "unknown rule ''", after
            # simulate had printed its seed
            known = f" ({', '.join(map(str, o.choices))})" if o.choices else ""
            raise ValueError(f"{o.flag} '': an empty name; give a {o.name}{known}, or "
                             "leave the option out")
    return given


def add_network_arguments(s: argparse.ArgumentParser) -> None:
    """Processes, sources and link delays (model/net/links.py)."""
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
    """Seed, trace id, output file and progress."""
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--trace-id", default="sim")
    s.add_argument("--out", required=True, metavar="FILE",
                   help=".jsonl, .jsonl.gz or .parquet")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
