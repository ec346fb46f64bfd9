"""``tomkit prove``: prove a protocol safe with Z3, or refute it, by the prover registered
for it (``fuzz/prove/provers.py``):

* ``tomkit prove RULE --n N [--delta D]``, or ``--protocol`` with a ToTo-family
  protocol: a delivery rule (``fuzz/prove/delivery/prover.py``);
* ``tomkit prove --protocol abcast|tomp [--n N] [--variant NAME]``: ABCAST and TOMP
  (``fuzz/prove/timestamps/prover.py``);
* ``tomkit prove --protocol qos [--n N]``: 003's latency bound (``fuzz/prove/qos_bound.py``).

Every flag is an option some prover declares; a flag the chosen prover does not declare
is refused, naming both. The provers print their lines (docs/prove.md).

Exit codes: 0 every property proved, 1 a counterexample, 2 bad input, 3 unknown
(timeout, or too large to enumerate) and no counterexample.
"""

from __future__ import annotations

import argparse
import math
import sys

from tomkit.cli.common import add_option_flag
from tomkit.cli.parser import not_a_folder
from tomkit.cli.verdict_json import document, dumps
from tomkit.fuzz.prove.provers import PROVERS, by_protocol, rule_prover
from tomkit.model.process import Option
from tomkit.model.toto.mutants import MUTANTS

__all__ = ["add_parser", "run"]

#: the verdict of a run of several outcomes, by its exit code: the worst outcome
VERDICTS = {0: "proved", 1: "counterexample", 3: "unknown"}


def _declared() -> dict[str, tuple[Option, list[tuple[str, Option]]]]:
    """Every option a prover declares (the first declaration), with the provers that
    take it and their own declarations."""
    out: dict[str, tuple[Option, list[tuple[str, Option]]]] = {}
    for p in PROVERS:
        for o in p.options:
            out.setdefault(o.name, (o, []))[1].append((p.name, o))
    return out


def _unstamped(d: dict) -> dict:
    """An outcome's data inside the command's JSON, which says the stamp once."""
    return {k: v for k, v in d.items() if k not in ("tomkit", "format_version")}


def _show(value: object) -> str:
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return str(value[0]) if value[0] == value[1] else f"{value[0]}-{value[1]}"
    return str(value)


def _takers(first: Option, takers: list[tuple[str, Option]]) -> str:
    """`` [a, b (default X)]``: the provers taking an option, with their own default when
    it is not the first declaration's."""
    return " [" + ", ".join(name if o.default == first.default or o.default is None
                            else f"{name} (default {_show(o.default)})"
                            for name, o in takers) + "]"


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``prove`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "prove", help="prove a delivery rule, or ABCAST / TOMP, safe with Z3, or refute it",
        description="Encode one activation of a ToTo-family delivery rule (papers 000, "
        "002) for n processors and ask Z3 whether two views of the same DAG can deliver "
        "differently; or, with --protocol, run the prover registered for that protocol "
        "(ABCAST and TOMP by induction, 004; 003's latency bound): docs/prove.md. Prints "
        "proved / counterexample / unknown per line.")
    s.add_argument("rule", metavar="RULE", nargs="?", default=None,
                   help="all-ack, toto, s-toto, g-toto, gl-toto, a mutant "
                   f"({', '.join(MUTANTS)}) or module:function; leave it out with "
                   "--protocol")
    s.add_argument("--protocol", choices=list(by_protocol()), default=None,
                   help="; ".join(f"{', '.join(p.protocols)}: {p.title}" for p in PROVERS))
    s.add_argument("--no-size-limit", action="store_true",
                   help="run an --n larger than the prover was measured to finish (Z3's "
                   "time grows steeply with n: it may run for hours)")
    s.add_argument("--format", "--output-format", choices=["text", "json"], default="text",
                   help="json: one object on stdout, each outcome's verdict, queries and "
                   "counterexample (docs/cli.md, 'One JSON shape'); the text lines go to "
                   "stderr as they come")
    g = s.add_argument_group("prover options (each prover declares its own)")
    for o, takers in _declared().values():
        add_option_flag(g, o, _takers(o, takers))
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    from tomkit.fuzz.counterexample import ReplayMismatch
    from tomkit.fuzz.prove.base import ProveUsageError

    def fail(msg: str) -> int:
        print(f"tomkit prove: {msg}", file=sys.stderr)
        return 2

    if args.rule == "":  # an unset shell variable read as no rule: "give a RULE"
        return fail("RULE '': an empty name; give a rule (tomkit prove toto --n 3) or "
                    f"--protocol ({', '.join(by_protocol())})")
    if args.protocol is None:
        if args.rule is None:
            return fail("give a RULE or --protocol "
                        f"({', '.join(by_protocol())})")
        prover = rule_prover()
    else:
        prover = by_protocol()[args.protocol]
        if args.rule is not None and not prover.takes_rule:
            return fail(f"give a RULE or --protocol, not both (got {args.rule!r}; the "
                        f"{prover.name} prover of {args.protocol} takes no RULE)")
    given = {n: getattr(args, n) for n in _declared() if getattr(args, n, None) is not None}
    bad = not_a_folder("--out", given.get("out"))
    if bad:  # found when a counterexample was to be written, after the proof
        return fail(bad)
    # NaN too: not "no time at all"; inf: Z3 takes milliseconds as an integer (leave it out
    # for no bound)
    if "timeout" in given and not 0 < given["timeout"] < math.inf:
        return fail(f"--timeout must be a positive number of seconds, got "
                    f"{given['timeout']} (a finite one: leave it out for no bound)")
    try:
        opts = prover.resolve(given)
        too_large = None if args.no_size_limit else \
            prover.too_large(opts.get("n"), "--n", "--no-size-limit",
                              "--timeout SECONDS")
        if too_large:
            return fail(too_large)
        if args.format == "text":
            return prover.run(args.protocol, args.rule, opts,
                              lambda line: print(line, flush=True), lambda outcome: None)
        outcomes: list[dict] = []
        code = prover.run(args.protocol, args.rule, opts,
                          lambda line: print(line, file=sys.stderr, flush=True),
                          lambda outcome: outcomes.append(_unstamped(outcome.to_dict())))
        print(dumps(document(VERDICTS[code] if outcomes else "nothing proved", {
            "prover": prover.name, "protocol": args.protocol, "rule": args.rule,
            "options": {k: list(v) if isinstance(v, tuple) else v for k, v in opts.items()},
            "outcomes": outcomes})))
        return code
    except ProveUsageError as e:
        return fail(str(e))
    except ReplayMismatch as e:
        return fail(f"INTERNAL ERROR, a counterexample did not replay concretely: {e}")
