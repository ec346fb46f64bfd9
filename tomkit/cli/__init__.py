"""The ``tomkit`` command line: one thin module per subcommand, each with ``add_parser``
and ``run``; the work is done in the layers below (``traces/``, ``checker/``, ``model/``,
``fuzz/``).

Exit codes follow the checkers: 0 every checked property holds (unknowns are reported,
not failures), 1 some property is violated, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

import tomkit
from tomkit.checker.pandas_guard import refuse as refuse_pandas

from .check_process import prepare as prepare_check_process
from .parser import Parser, unknown_options

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: the subcommands, in the order ``tomkit --help`` lists them (module tomkit.cli.<name>)
SUBCOMMANDS = ("check", "watch", "import", "conform", "simulate", "fuzz", "prove", "tlc",
               "generate", "scan", "sample", "run")


class _Version(argparse.Action):
    """argparse's version action, reading the version only when asked for it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"tomkit {tomkit.__version__}")  # (on stdout, as argparse's own)
        parser.exit()


def _module(name: str) -> str:
    return "import_" if name == "import" else name  # "import" is a Python keyword


def build_parser(only: str | None = None) -> Parser:
    """The whole command line; with ``only`` (a subcommand), that subcommand's parser in
    full and the others as bare names. Building a subcommand's parser imports its module,
    and some import the protocol models, Z3 or Spark's helpers: ``tomkit check`` should
    not wait for them (a second or more of a short run)."""
    parser = Parser(
        prog="tomkit",
        description="Formal models and conformance checking for totally ordered multicast.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMANDS:
        if only is None or name == only:
            importlib.import_module(f"tomkit.cli.{_module(name)}").add_parser(sub)
        else:
            sub.add_parser(name)
    return parser


def main(argv: list[str] | None = None) -> int:
    own_process = argv is None  # the command itself, not a program calling main()
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _main(argv, own_process)
    except KeyboardInterrupt as e:  # Ctrl-C: said in one line, not a traceback, also
        # while the subcommand's modules load (seconds on a loaded machine); then what
        # became of the files being written (traces/writer.py notes it on the exception)
        name = f"tomkit {argv[0]}" if argv and argv[0] in SUBCOMMANDS else "tomkit"
        signum = _signal_of(e)
        print(f"{name}: {'terminated (SIGTERM)' if signum == signal.SIGTERM else 'interrupted'}",
              file=sys.stderr)
        for note in getattr(e, "__notes__", ()):
            print(f"{name}: {note}", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:  # the reader went away (tomkit watch ... | head): quietly,
        # as a command killed by SIGPIPE; stdout is pointed at /dev/null so that Python's
        # own flush at exit does not fail a second time
        if own_process:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13


def _signal_of(e: KeyboardInterrupt) -> int:
    """SIGTERM for traces/interrupt.py's Terminated, SIGINT for Ctrl-C. That module is
    not imported to tell (it loads the readers, before check_process.prepare may run):
    not loaded, the handler raising Terminated was never installed."""
    interrupt = sys.modules.get("tomkit.traces.interrupt")
    return signal.SIGTERM if interrupt is not None and isinstance(e, interrupt.Terminated) \
        else signal.SIGINT


def _before_parsing(argv: list[str]) -> tuple[list[str], str | None]:
    """The command line as meant, or why it cannot be: ``tomkit help [SUB]`` is ``tomkit
    [SUB] --help``; options before the subcommand, and a file where the subcommand
    goes, are said (argparse took the first word for a subcommand and said "invalid
    choice: '1'")."""
    if argv[:1] == ["help"]:  # an unknown name after it is said as one, closest too
        return ([argv[1], "--help"] if argv[1:2] and argv[1] in SUBCOMMANDS
                else argv[1:2] or ["--help"]), None
    if not argv:  # (argparse: "the following arguments are required: command")
        return argv, f"give a subcommand: {', '.join(SUBCOMMANDS)}"
    if argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "--version"):
        return argv, None
    subs = [i for i, a in enumerate(argv) if a in SUBCOMMANDS]
    if argv[0].startswith("-") and subs:
        i = subs[0]
        return argv, (f"options go after the subcommand: tomkit {argv[i]} "
                      f"{' '.join(argv[:i] + argv[i + 1:])}")
    if os.path.exists(argv[0]):
        return argv, (f"{argv[0]!r} is a {'folder' if os.path.isdir(argv[0]) else 'file'}, "
                      f"not a subcommand; to check it: tomkit check {' '.join(argv)}")
    return argv, None


def _main(argv: list[str], own_process: bool) -> int:
    argv, wrong = _before_parsing(argv)
    if wrong:
        print(f"tomkit: {wrong} (tomkit --help gives the usage)", file=sys.stderr)
        return 2
    if own_process and argv[:1] == ["check"]:
        prepare_check_process()  # before the check path's modules load
    elif own_process and argv[:1] == ["scan"]:
        # a small local data set is scanned in this process, as tomkit check does; the
        # scan lifts the refusal before it starts Spark (checker/spark/job.py)
        refuse_pandas()
    parser = build_parser(argv[0] if argv and argv[0] in SUBCOMMANDS else None)
    if argv and argv[0] in SUBCOMMANDS:
        # files may follow options (tomkit check a.jsonl --liveness b.jsonl), as in most
        # commands; what the subcommand does not take is said by it, not by tomkit
        sub = parser.subcommand(argv[0])
        # after "--" everything is positional (tomkit run's node arguments), which the
        # intermixed parse does not keep: such a line is parsed in order, as before
        parse = (sub.parse_known_args if "--" in argv[1:]
                 else sub.parse_known_intermixed_args)
        args, extras = parse(argv[1:])
        args.command = argv[0]
        if extras:
            unknown_options(sub, extras)
    else:
        args = parser.parse_args(argv)
    if own_process and argv[:1] == ["simulate"]:
        importlib.import_module("tomkit.cli.simulate").prepare_process(args)
    if own_process:  # SIGTERM (kill, timeout) keeps whole records as Ctrl-C does; until
        # now (modules loading) it ends the process as ever: nothing is written yet
        importlib.import_module("tomkit.traces.interrupt").terminate_as_interrupt()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
