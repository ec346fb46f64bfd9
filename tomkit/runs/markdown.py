"""Sections of the docs written by a script: the text between two markers,

    <!-- generated: NAME (by COMMAND) -->
    ...
    <!-- end generated: NAME -->

is the script's, rewritten whole by it (``bench/... --write-docs``), so the figures a page
quotes are the figures a run produces; tests compare the committed section with a rerun.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["replace_section", "section", "write_section"]


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(<!-- generated: " + re.escape(name) + r"\b[^>]*-->\n)(.*?)"
                      r"(<!-- end generated: " + re.escape(name) + r" -->)", re.S)


def section(text: str, name: str) -> str:
    """The body of the generated section ``name``; ValueError if there is none."""
    m = _pattern(name).search(text)
    if m is None:
        raise ValueError(f"no generated section {name!r} (markers '<!-- generated: "
                         f"{name} ... -->' and '<!-- end generated: {name} -->')")
    return m.group(2)


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the body of section ``name`` replaced by ``body``."""
    section(text, name)
    body = body if body.endswith("\n") else body + "\n"
    return _pattern(name).sub(lambda m: m.group(1) + body + m.group(3), text, count=1)


def write_section(path: str | Path, name: str, body: str) -> bool:
    """Rewrite section ``name`` of the file ``path``; whether it changed."""
    p = Path(path)
    old = p.read_text()
    new = replace_section(old, name, body)
    if new != old:
        p.write_text(new)
    return new != old
