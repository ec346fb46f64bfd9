"""Helpers of the live recording tests (tests/record/): check a trace, read its records,
and skip, with the reason, a system that cannot run here."""

from __future__ import annotations

import contextlib
import gzip
import importlib
import io
import json
from pathlib import Path

import pytest

from tomkit.cli import main

#: a bound on each live recording, not a target: the runs take seconds, but on a loaded
#: 2-core machine (the suite runs on two workers) JVMs have taken over 50 s to start
LIVE_TIMEOUT = 120


def check(*args: str) -> tuple[int, dict]:
    """``tomkit check --format json`` on the arguments: exit code and report."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "-q", "--format", "json", *args])
    return code, json.loads(out.getvalue())


def verdicts(report: dict) -> dict[str, str]:
    (trace,) = report["traces"]
    return trace["verdicts"]


def records(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [r for r in map(json.loads, f) if "kind" in r]


def live(system: str):
    """The system's recorder module, or a skip naming why the system cannot run here."""
    mod = importlib.import_module(f"tomkit.record.{system}.recorder")
    why = mod.available()
    if why:
        pytest.skip(f"{system} cannot run here: {why}")
    return mod
