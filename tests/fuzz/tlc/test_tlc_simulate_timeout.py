"""``tomkit tlc --simulate --timeout S``: TLC simulates until stopped, so a simulation that
finds nothing within its time ends normally (exit 0, its own sentence, no proof claimed),
while one that finds a violation reports it (exit 1). A spec of four states; each run is
a JVM start and at most a few seconds."""

from __future__ import annotations

import argparse
import json

import pytest

from tomkit.cli import tlc as tlc_cli

SPEC = """---- MODULE Tick ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 4
TypeOK == x \\in 0..3
Small == x < 3
====
"""


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tomkit")
    tlc_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


def _spec(tmp_path, invariant: str):
    spec = tmp_path / "Tick.tla"
    spec.write_text(SPEC)
    (tmp_path / "Tick.cfg").write_text(f"INIT Init\nNEXT Next\nINVARIANT {invariant}\n")
    return spec


@pytest.mark.tlc
def test_a_simulation_that_finds_nothing_in_its_time_exits_0(tmp_path, capsys):
    spec = _spec(tmp_path, "TypeOK")
    code = _cli(["tlc", str(spec), "--simulate", "--seed", "3", "--timeout", "2", "-q",
                 "--out", str(tmp_path / "out"), "--format", "json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code == 0, captured.err
    assert (doc["status"], doc["mode"], doc["seed"], doc["simulated_for"]) == \
        ("ok", "simulation", 3, 2.0)
    assert doc["errors"] == []
    code = _cli(["tlc", str(spec), "--simulate", "--timeout", "1.5", "-q",
                 "--out", str(tmp_path / "out")])
    text = capsys.readouterr().out
    assert code == 0 and "no violation found in 1.5 s of simulation, not a proof" in text
    assert "did not finish" not in text


@pytest.mark.tlc
def test_a_simulation_that_finds_a_violation_reports_it(tmp_path, capsys):
    spec = _spec(tmp_path, "Small")
    code = _cli(["tlc", str(spec), "--simulate", "--timeout", "60", "-q",
                 "--out", str(tmp_path / "out"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["status"] == "violation" and doc["violated"] == "Small"
    assert doc["simulated_for"] is None
