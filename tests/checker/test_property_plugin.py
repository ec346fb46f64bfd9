"""A new property with one option, added through the public hook
(``checker.properties.register``) and nothing else: its option is a flag of ``tomkit
check``, a keyword of ``tomkit.check()``, a key of the JSON report's ``options`` and a
line of docs/properties.md, with the validation its declaration asks for."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tracedsl import parse

import tomkit
from tomkit.checker import docs
from tomkit.checker.check_run import UsageError
from tomkit.checker.properties import (
    EXACT,
    Option,
    Options,
    Property,
    positive,
    properties,
    register,
    unregister,
)
from tomkit.checker.result import Result, Verdict
from tomkit.cli import main

# ---------------------------------------------------------------- the fake property module

NAME = "x-max-deliveries"
MAX = Option("max_deliveries", int, "check at most N deliveries per process", "N",
             "deliveries", validate=positive)


def check(trace, options: Options) -> Result:
    bound = options.max_deliveries
    if bound is None:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation="no bound given")
    for p in trace.processes:
        if len(trace.deliveries[p]) > bound:
            return Result(NAME, trace.id, Verdict.VIOLATED,
                          explanation=f"{p} delivers more than {bound} messages")
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(chunk, options: Options) -> np.ndarray:
    return np.full(chunk.ntr, EXACT, np.int8)  # every trace to the exact check


PROPERTY = Property(NAME, "at most N deliveries per process", False, check, detect,
                    "Max deliveries: no process delivers more than N messages.",
                    options=(MAX,), scan=False)

# --------------------------------------------------------------------------------- tests


@pytest.fixture
def plugin():
    register(PROPERTY)
    try:
        yield PROPERTY
    finally:
        unregister(NAME)


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.jsonl"
    tomkit.write(path, parse("p send a\np send b\np deliver a\np deliver b\n"
                             "q deliver a\nq deliver b"))
    return path


def test_the_option_is_a_flag_of_tomkit_check(plugin, trace, capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "--max-deliveries N" in capsys.readouterr().out
    code = main(["check", str(trace), "--max-deliveries", "1", "--format", "json", "-q"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # the option selects its property, which is violated
    assert out["options"]["max_deliveries"] == 1
    assert out["traces"][0]["verdicts"][NAME] == "violated"


def test_the_option_is_a_keyword_of_the_api(plugin, trace):
    report = tomkit.check(trace, max_deliveries=2)
    d = report.to_dict()
    assert d["options"]["max_deliveries"] == 2
    assert d["traces"][0]["verdicts"][NAME] == "holds"
    assert d["traces"][0]["verdicts"]["integrity"] == "holds"  # the defaults still run


def test_the_declared_validation_is_everyones(plugin, trace, capsys):
    with pytest.raises(UsageError, match="^max_deliveries must be positive, got 0$"):
        tomkit.check(trace, max_deliveries=0)
    assert main(["check", str(trace), "--max-deliveries", "0"]) == 2
    assert "--max-deliveries must be positive" in capsys.readouterr().err


def test_the_option_has_its_line_in_the_docs(plugin):
    text = docs.render()
    line = next(ln for ln in text.splitlines() if ln.startswith("| `--max-deliveries N`"))
    assert "`max_deliveries`" in line and NAME in line and "deliveries" in line
    assert f"| [`{NAME}`](#{NAME}) | with `--max-deliveries` |" in text
    assert f"\n## {NAME}\n" in text


def test_unregistered_the_option_is_unknown_everywhere(trace):
    assert NAME not in properties()
    with pytest.raises(TypeError, match="max_deliveries"):
        Options(max_deliveries=1)
    with pytest.raises(TypeError, match="max_deliveries"):
        tomkit.check(trace, max_deliveries=1)


def test_a_name_is_registered_once(plugin):
    with pytest.raises(ValueError, match="already registered"):
        register(PROPERTY)


def test_one_option_one_declaration(plugin):
    clash = Property("x-other", "another", False, check, detect, "Other.",
                     options=(Option("max_deliveries", float, "something else"),))
    with pytest.raises(ValueError, match="declared differently"):
        register(clash)
    assert "x-other" not in properties()


def test_a_scanned_propertys_option_is_a_flag_of_tomkit_scan(capsys):
    from tomkit.checker.spark.options import scanned_options

    scanned = Property("x-scanned", "scanned", False, check, detect, "Scanned.",
                       options=(MAX,), scan=True)
    assert "max_deliveries" not in scanned_options()
    register(scanned)
    try:
        assert scanned_options()[-1] == "max_deliveries"
        with pytest.raises(SystemExit):
            main(["scan", "--help"])
        assert "--max-deliveries N" in capsys.readouterr().out
    finally:
        unregister("x-scanned")
