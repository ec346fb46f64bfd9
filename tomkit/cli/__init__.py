"""The ``tomkit`` command line: one thin module per subcommand, each with ``add_parser``
and ``run``; the work is done in the layers below (``traces/``, ``checker/``, ``model/``,
``fuzz/``).

Exit codes follow the checkers: 0 every checked property holds (unknowns are reported,
not failures), 1 some property is violated, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tomkit import __version__

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: the subcommands, in the order ``tomkit --help`` lists them (module tomkit.cli.<name>)
SUBCOMMANDS = ("check", "watch", "import", "conform", "simulate", "fuzz", "prove", "tlc",
               "generate", "scan", "sample")


def _module(name: str) -> str:
    return "import_" if name == "import" else name  # "import" is a Python keyword


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tomkit",
        description="Formal models and conformance checking for totally ordered multicast.")
    parser.add_argument("--version", action="version", version=f"tomkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        importlib.import_module(f"tomkit.cli.{_module(name)}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
