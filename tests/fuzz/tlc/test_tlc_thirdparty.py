"""``tomkit tlc`` on specifications it did not write (issue 18): small fixtures in the style
of the public TLA+ examples (tests/data/tlc/thirdparty/): a violated invariant in a spec
without broadcast variables, configs with TLC 1.8's keywords, a spec extending TLAPS,
module resolution, and a broadcast spec with its own variable names and a trace map."""

from __future__ import annotations

import argparse
import json

import pytest
from locations import DATA

from tomkit.cli import main as tomkit_main
from tomkit.cli import tlc as tlc_cli

THIRD = DATA / "tlc" / "thirdparty"


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tomkit")
    tlc_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["tlc", *argv])
    return args.func(args)


def spec(name: str) -> str:
    return str(THIRD / name / f"{name}.tla")


def cfg(name: str, config: str) -> list[str]:
    return ["--config", str(THIRD / name / f"{config}.cfg")]


@pytest.mark.tlc
def test_violation_without_broadcast_variables(tmp_path, monkeypatch, capsys):
    """DieHard-like: the invariant is meant to fail. Exit 1, the invariant and the
    behaviour (changed variables marked) printed, no trace and why, nothing in the
    current folder but the default output folder."""
    monkeypatch.chdir(tmp_path)
    assert cli([spec("Ferry"), "-q"]) == 1
    out = capsys.readouterr().out
    assert "invariant violated: NotSolved (counterexample of 8 states)" in out
    assert "1: <Initial predicate>" in out and '   /\\ near = {"wolf", "goat", "cabbage"}' in out
    assert '8: <Cross line' in out and ' * /\\ far = {"wolf", "goat", "cabbage"}' in out
    assert "no v1 trace: the spec has no variable 'delivered'" in out and "--trace-map" in out
    assert "TLC's output: tlc-out/Ferry.tlc.log" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tlc-out"]
    assert "Invariant NotSolved is violated" in (tmp_path / "tlc-out/Ferry.tlc.log").read_text()


@pytest.mark.tlc
def test_alias_is_printed_by_replaying_the_counterexample(tmp_path, capsys):
    code = cli([spec("Ferry"), *cfg("Ferry", "FerryAlias"), "-q", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "FerryAlias.cfg: line 4: ALIAS Picture: TLC 2.15 has no ALIAS" in out
    assert "behaviour (8 states, the ALIAS Picture;" in out
    assert '   /\\ right = {}' in out and " * /\\ across = 3" in out
    assert "/\\ boat =" not in out


def test_postcondition_is_refused_with_the_reason(tmp_path, capsys):
    code = cli([spec("Ferry"), *cfg("Ferry", "FerryPost"), "-q", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "FerryPost.cfg: line 4: POSTCONDITION NotSolved is not supported" in err
    assert "TLC 2.15" in err and "TOMKIT_TLA2TOOLS" in err


@pytest.mark.tlc
def test_check_deadlock_false_is_honoured(tmp_path, capsys):
    """CHECK_DEADLOCK FALSE runs as -deadlock (exit 0); the same model with TRUE finds the
    terminal states as a deadlock (exit 1), so the translation is what made the difference."""
    assert cli([spec("Commit"), "-q", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Commit.cfg: line 5: CHECK_DEADLOCK FALSE passed to TLC 2.15 as its -deadlock" in out
    assert "no error found" in out
    code = cli([spec("Commit"), *cfg("Commit", "CommitDeadlock"), "-q", "--out", str(tmp_path),
                "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["violation_kind"] == "deadlock"
    beh = doc["behaviour"]
    assert [s["state"] for s in beh] == list(range(1, len(beh) + 1))
    assert all(s["changed"] == ["state"] for s in beh[1:]) and beh[0]["changed"] == []
    assert doc["trace"] is None and "no variable 'delivered'" in doc["trace_note"]
    assert doc["log"] == str(tmp_path / "CommitDeadlock.tlc.log")


@pytest.mark.tlc
def test_spec_extending_tlaps_uses_tomkits_stub(tmp_path, capsys):
    assert cli([spec("Counter"), "-q", "--out", str(tmp_path)]) == 0
    log = (tmp_path / "Counter.tlc.log").read_text()
    assert "fuzz/tlc/modules/TLAPS.tla" in log


@pytest.mark.tlc
def test_modules_come_from_the_spec_folder_lib_and_tomkit_only(tmp_path, capsys):
    """A module in a sibling folder is not found unless named with --lib, and a stray
    TLAPS.tla beside it (one that fails every run) is never picked up."""
    for d in ("home", "other", "stray"):
        (tmp_path / d).mkdir()
    (tmp_path / "home/Uses.tla").write_text(
        "---- MODULE Uses ----\nEXTENDS Naturals, Helper, TLAPS\nVARIABLE x\n"
        "Init == x = H\nNext == x' = 1 - x\nInv == x \\in {0, 1}\n====\n")
    (tmp_path / "home/Uses.cfg").write_text("INIT Init\nNEXT Next\nINVARIANT Inv\n")
    (tmp_path / "other/Helper.tla").write_text("---- MODULE Helper ----\nH == 0\n====\n")
    (tmp_path / "stray/TLAPS.tla").write_text("---- MODULE TLAPS ----\nASSUME FALSE\n====\n")
    uses, out = str(tmp_path / "home/Uses.tla"), ["-q", "--out", str(tmp_path / "out")]
    assert cli([uses, *out]) == 2
    err = capsys.readouterr().err
    assert "Cannot find source file for module Helper" in err
    assert f"tomkit looks in the spec's folder ({tmp_path / 'home'})" in err and "--lib" in err
    assert cli([uses, *out, "--lib", str(tmp_path / "other")]) == 0
    capsys.readouterr()
    # the user's folders come before tomkit's stub
    assert cli([uses, *out, "--lib", str(tmp_path / "other"), "--lib",
                str(tmp_path / "stray")]) == 2
    assert "of module TLAPS is false" in capsys.readouterr().err


@pytest.mark.tlc
def test_broadcast_spec_with_its_own_names_and_a_trace_map(tmp_path, capsys):
    trace = tmp_path / "Sequencer.cex.jsonl"
    code = cli([spec("Sequencer"), "--trace-map", str(THIRD / "Sequencer/Sequencer.toml"),
                "-q", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "invariant violated: SameOrder" in out
    assert f"v1 trace (8 events, from {THIRD / 'Sequencer/Sequencer.toml'}) written to " \
           f"{trace}" in out
    assert "tomkit check on it: total-order-weak violated: n1 delivers n1.1 before n2.1, " \
           "but n2 delivers n2.1 before n1.1" in out
    recs = [json.loads(x) for x in trace.read_text().splitlines()[1:]]
    assert {(r["process"], r["kind"]) for r in recs if r["kind"] != "deliver"} == {
        ("n1", "view"), ("n2", "view"), ("n1", "send"), ("n2", "send")}
    # the written trace is one `tomkit check` judges
    assert tomkit_main(["check", str(trace), "-q"]) == 1
    assert "total-order-weak    VIOLATED" in capsys.readouterr().out


@pytest.mark.tlc
def test_trace_map_as_an_operator_of_the_spec(tmp_path, capsys):
    code = cli([spec("Sequencer"), "--trace-map", "TraceMap", "-q", "--out", str(tmp_path),
                "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["trace_source"] == "operator TraceMap"
    assert doc["checker"]["property"] is None  # the operator names no checker property
    assert "total-order-weak" in doc["checker"]["violated"]


@pytest.mark.tlc
def test_a_trace_map_tlc_cannot_evaluate_is_reported_and_the_violation_stands(tmp_path,
                                                                              capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("deliveries = 'log'\nsends = 'NoSuchOperator'\n")
    code = cli([spec("Sequencer"), "--trace-map", str(bad), "-q", "--out", str(tmp_path)])
    cap = capsys.readouterr()
    assert code == 1 and "invariant violated: SameOrder" in cap.out
    assert "no v1 trace: from" in cap.err and "NoSuchOperator" in cap.err
    assert "(the trace map sends)" in cap.err
    assert not (tmp_path / "Sequencer.cex.jsonl").exists()


@pytest.mark.tlc
def test_sequencer_without_the_fast_path_keeps_the_order(tmp_path, capsys):
    assert cli([spec("Sequencer"), *cfg("Sequencer", "SequencerSafe"), "-q", "--out",
                str(tmp_path)]) == 0


def test_malformed_trace_map_is_bad_input_before_tlc_runs(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('deliveries = "[n \\in Node |-> log[n]]"\n')
    assert cli([spec("Sequencer"), "--trace-map", str(bad), "-q", "--out", str(tmp_path)]) == 2
    assert "single quotes" in capsys.readouterr().err
    assert not any(tmp_path.glob("*.log"))
