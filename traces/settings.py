"""Reading the project's small TOML files (guarantee profiles, import mappings): a file
that cannot be read, is not TOML, or holds a key it should not is refused with the file
and the key, as bad trace input is."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from typing import Any

import tomllib

__all__ = ["closest", "read_toml"]


def read_toml(path: str | os.PathLike, keys: Iterable[str],
              error: type[Exception]) -> dict[str, Any]:
    """The top-level table of ``path``; ``error`` (a ValueError) names the file when it
    cannot be read or parsed, or has a top-level key outside ``keys``."""
    known = set(keys)
    try:
        if not os.path.isfile(path) and os.path.exists(path):
            # a folder: IsADirectoryError's words; a pipe waited, /dev/zero filled memory
            what = "a folder" if os.path.isdir(path) else "a pipe or a device, not a file"
            raise error(f"{path}: {what}; give a TOML file")
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not TOML: {e}") from None
    except UnicodeDecodeError as e:  # a traceback before: tomllib reads UTF-8 alone
        raise error(f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                    f"{e.start}); a TOML file is UTF-8") from None
    unknown = sorted(set(doc) - known)
    if unknown:
        raise error(f"{path}: unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}"
                    + closest(unknown[0], known))
    return doc


def closest(name: object, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the known name closest to a misspelt one, else ``""``
    (the command line's way, tomkit/cli/parser.py)."""
    near = difflib.get_close_matches(str(name), sorted(known), n=1)
    return f"; did you mean {near[0]!r}?" if near else ""
