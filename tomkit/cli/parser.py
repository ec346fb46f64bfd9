"""The command line's parser: argparse, with its usage errors said in one line.

argparse answers a mistake with the whole usage block (28 lines for ``simulate``) and
one line of error below it, and reports an option a subcommand does not have as an
error of ``tomkit`` itself. A new user reads the first lines and misses the last one, so
every usage error here is one line, of the subcommand that was called: what was given,
what is wanted (the closest spelling, when one is close), and where the usage is. The
exit code stays argparse's: 2.
"""

from __future__ import annotations

import argparse
import difflib
import os
import stat
import sys
from collections.abc import Iterable
from typing import NoReturn

__all__ = ["Parser", "closest", "empty_name", "not_a_file_out", "not_a_folder",
           "overwrites_input", "unknown_options"]


def closest(given: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``known`` to ``given``, or ``""``
    when none is close (difflib's ratio 0.6, its default)."""
    # flags are compared without their dashes, which every one shares, names in any case
    bare = {k.lstrip("-").lower(): k for k in known}
    match = difflib.get_close_matches(given.lstrip("-").lower(), list(bare), n=1)
    return f"; did you mean {bare[match[0]]!r}?" if match else ""


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose usage errors are one line on stderr,
    ``PROG: MESSAGE (PROG --help gives the usage)``, exit code 2. Subparsers made from
    it are of this class too (argparse makes them of the parent's class)."""

    #: the subcommands' action, once added
    subparsers: argparse._SubParsersAction | None = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        # no abbreviations: `tomkit conform --n 3` was taken as --no-control-records (the
        # one option starting so) and answered "--control-records does not apply to
        # toto"; a flag is given whole, or said to be unknown with the closest one
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def add_subparsers(self, **kwargs: object) -> argparse._SubParsersAction:
        self.subparsers = super().add_subparsers(**kwargs)
        return self.subparsers

    def subcommand(self, name: str) -> Parser:
        """The parser of the subcommand ``name``."""
        assert self.subparsers is not None
        return self.subparsers.choices[name]

    def flags(self) -> list[str]:
        """Every option string this parser takes."""
        return [s for a in self._actions for s in a.option_strings]

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} ({self.prog} --help gives the usage)\n")

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # argparse's own message lists the choices; the closest one is added to it
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as e:
            if action.choices is None or not isinstance(value, str):
                raise
            raise argparse.ArgumentError(
                action, f"{e.message}{closest(value, map(str, action.choices))}") from None


def empty_name(*given: tuple[str, str | None, str]) -> str | None:
    """The first of ``(flag, value, what it names)`` whose value is an empty name (an
    unset shell variable), said in one line; or None. Left alone, an empty name was
    taken as no option (nothing written, nothing said), as the current folder (replaced
    whole), or failed with a traceback when the command came to write."""
    for flag, value, what in given:
        if value == "":
            return f"{flag} '': an empty name; give a {what}"
    return None


def not_a_folder(flag: str, path: str | None) -> str | None:
    """Why ``path``, given to ``flag`` to be a folder to write in, cannot be one (it is a
    file: the command found out only when it came to write, after its work; it is empty,
    an unset shell variable: fuzz lost its finding to a traceback, tlc wrote into the
    current folder), or None."""
    if path == "":
        return empty_name((flag, path, "folder"))
    if path and os.path.exists(path) and not os.path.isdir(path):
        return f"{flag} {path}: a file; {flag} takes a folder"
    return None


def overwrites_input(inputs: list[str], *outputs: tuple[str, str | None]) -> str | None:
    """An output (``(flag, path)``) that names one of the input files, in one line; or
    None. (Also ``tomkit watch --out``: its verdict lines appended to a log it follows.)"""
    for flag, path in outputs:
        if not path or not os.path.isfile(path):
            continue
        for given in inputs:
            inside = os.path.isdir(given) and os.path.realpath(path).startswith(
                os.path.join(os.path.realpath(given), ""))  # a file the folder stands for
            if inside or os.path.isfile(given) and os.path.samefile(path, given):
                return (f"{flag} {path}: the input {given}, which it would overwrite; give "
                        "another file")
    return None


def not_a_file_out(flag: str, path: str | None) -> str | None:
    """Why ``path``, given to ``flag`` to be a file written, cannot be one: a named pipe,
    a socket or a device (simulate waited for a reader, then a stop removed the user's
    pipe; sample replaced the pipe by a file); or None."""
    try:
        mode = os.stat(path).st_mode if path else None
    except OSError:
        return None
    if mode is None or stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")
    return f"{flag} {path}: {what}, not a file; give a file name"


def unknown_options(parser: Parser, extras: list[str]) -> NoReturn:
    """Refuse what ``parser`` (a subcommand's) did not take, in one line naming it, with
    the closest option the subcommand has."""
    flags = parser.flags()
    first = extras[0].partition("=")[0]
    if first.startswith("-"):
        what = f"no option {first}{closest(first, flags)}"
    else:
        what = f"one argument too many: {first!r}"
    more = f" (then {' '.join(extras[1:])})" if len(extras) > 1 else ""
    print(f"{parser.prog}: {what}{more} ({parser.prog} --help gives the usage)",
          file=sys.stderr)
    raise SystemExit(2)
