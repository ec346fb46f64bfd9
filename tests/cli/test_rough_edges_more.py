"""Rough edges of the command line and the API found after test_rough_edges_usage.py
(docs/cli.md lists them): a report of nothing judged says so in every format and engine;
sizes no prover or fuzzer was measured to finish are refused, with the way to force
them; an unknown property, scope or profile is one error type of the API, with the
closest spelling."""

from __future__ import annotations

import json

import pytest
from cli_run import one_line, run

import tomkit
from tomkit.cli import main
from tomkit.traces.generate import clean_trace
from tomkit.traces.writer import write_records


@pytest.fixture
def rejected(tmp_path):
    """A file whose every record is rejected."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"trace": "t", "process": "p", "kind": "bogus"}\n'
                    '{"trace": "t", "kind": "send"}\n')
    return path


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.jsonl"
    write_records(path, clean_trace("a", seed=1))
    return path


# ---- nothing judged is not "holds" -------------------------------------------------------

def test_check_of_only_rejected_records_says_no_trace_checked_in_both_formats(capsys,
                                                                               rejected):
    code, out, _ = run(capsys, "check", rejected, "--keep-going")
    assert code == 2 and out.strip().endswith("verdict: no trace checked")
    code, out, _ = run(capsys, "check", rejected, "--keep-going", "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "no trace checked"
    assert doc["summary"]["rejected"] == 2 and doc["traces"] == []


def test_json_verdict_of_a_judged_trace_is_unchanged(capsys, trace):
    code, out, _ = run(capsys, "check", trace, "--format", "json")
    assert code == 0 and json.loads(out)["verdict"] == "holds"


def test_scan_of_only_rejected_records_says_no_trace_checked(capsys, rejected, tmp_path):
    code, out, _ = run(capsys, "scan", rejected.parent)  # the files engine, no JVM
    assert code == 2 and out.strip().endswith("verdict: no trace checked")


# ---- sizes not measured to finish -------------------------------------------------------

@pytest.mark.parametrize("argv, most", [
    (["prove", "toto", "--n", "100"], "up to n = 10"),
    (["prove", "--protocol", "tomp", "--n", "3-9"], "up to n = 8"),
    (["prove", "--protocol", "qos", "--n", "17"], "up to n = 16"),
    (["fuzz", "toto", "--n", "1000"], "up to n = 100"),
    (["fuzz", "--protocol", "abcast", "--n", "101"], "up to n = 100"),
])
def test_a_size_never_measured_to_finish_is_refused_with_the_way_to_force_it(capsys, argv,
                                                                             most):
    code, out, err = run(capsys, *argv)
    line = one_line(err, f"tomkit {argv[0]}: --n ")
    assert code == 2 and out == ""
    assert most in line and "--no-size-limit" in line


def test_prove_refuses_an_infinite_timeout_in_one_line(capsys):
    code, _, err = run(capsys, "prove", "--protocol", "qos", "--n", "2", "--timeout", "inf")
    assert code == 2 and one_line(err, "tomkit prove: --timeout must be a positive number "
                                  "of seconds, got inf").endswith("leave it out for no bound)")


def test_no_size_limit_lets_a_large_n_through_to_the_provers_own_checks(capsys):
    # past the size check: the prover's own refusal of a delta shows it was reached
    code, _, err = run(capsys, "prove", "toto", "--n", "11", "--delta", "99",
                       "--no-size-limit")
    assert code == 2 and "does not accept delta = 99" in err


# ---- the API: one error type for unknown names ------------------------------------------

@pytest.mark.parametrize("kw, words", [
    ({"properties": ["integrty"]}, "unknown property integrty; known: integrity, "),
    ({"properties": ["fifo-order@corect"]}, "unknown scope 'corect'"),
    ({"scope": "corect"}, "did you mean 'correct'?"),
    ({"guarantee": "totem-ev"}, "did you mean 'totem-evs'?"),
])
def test_an_unknown_name_is_a_usage_error_with_the_closest_spelling(trace, kw, words):
    with pytest.raises(tomkit.UsageError) as ei:
        tomkit.check(trace, **kw)
    assert isinstance(ei.value, tomkit.UnknownName) and isinstance(ei.value, KeyError)
    assert words in str(ei.value) and not str(ei.value).startswith(("'", '"'))
    if "properties" in kw and "@" not in kw["properties"][0]:
        assert str(ei.value).endswith("did you mean 'integrity'?")


# ---- tried as a new user would (docs/cli.md) ---------------------------------------------

def test_ctrl_c_while_the_subcommand_loads_is_one_line(capsys, monkeypatch):
    import tomkit.cli as cli

    def interrupted(only=None):
        raise KeyboardInterrupt  # as Ctrl-C lands while a subcommand's modules import

    monkeypatch.setattr(cli, "build_parser", interrupted)
    code, out, err = run(capsys, "generate", "--traces", "3", "--out", "g")
    assert code == 130 and one_line(err, "tomkit generate: interrupted")


def test_check_of_standard_input_says_it_is_not_read(capsys):
    code, _, err = run(capsys, "check", "-")
    assert code == 2 and "standard input is not read" in one_line(err, "tomkit check: '-'")


def test_a_parquet_file_with_a_json_lines_name_is_named_so(capsys, trace, tmp_path):
    pq = tmp_path / "t.parquet"
    write_records(pq, clean_trace("a", seed=1))
    wrong = tmp_path / "t2.jsonl"
    wrong.write_bytes(pq.read_bytes())
    code, _, err = run(capsys, "check", wrong)
    assert code == 2 and one_line(err, "tomkit check: bad input: ").endswith(
        "a Parquet file (PAR1 at both ends) with a JSON Lines name: name it .parquet")
    # a JSON Lines file whose first line happens to read PAR1 is still read line by line
    odd = tmp_path / "odd.jsonl"
    odd.write_text("PAR1\n" + trace.read_text())
    code, out, _ = run(capsys, "check", odd, "--keep-going")
    assert code == 2 and "180 records accepted" in out


def test_simulate_refuses_a_folder_as_out_before_simulating(capsys, tmp_path):
    (tmp_path / "run.jsonl").mkdir()
    code, out, err = run(capsys, "simulate", "--messages", "3", "--out", tmp_path / "run.jsonl")
    assert code == 2 and out == ""  # no seed line: nothing was simulated
    assert one_line(err, "tomkit simulate: --out ").endswith("a folder; give a file name")


@pytest.mark.parametrize("old, new, near", [
    ('process = "host"', 'proces = "host"', "did you mean 'process'?"),
    ('format = "regex"', 'format = "regx"', "did you mean 'regex'?"),
    ("[kinds]", "[kind]", "did you mean 'kinds'?"),
    ('DELIVER = "deliver"', 'DELIVER = "delivr"', "did you mean 'deliver'?"),
])
def test_a_mapping_typo_gets_the_closest_spelling(capsys, tmp_path, old, new, near):
    from locations import ROOT

    text = (ROOT / "traces" / "mappings" / "line-log.toml").read_text()
    assert old in text
    mapping = tmp_path / "m.toml"
    mapping.write_text(text.replace(old, new, 1))
    log = tmp_path / "log.txt"
    log.write_text("2026-11-24T10:00:00.120Z n1 SEND n1.7\n")
    code, _, err = run(capsys, "import", "--mapping", mapping, log, "--out",
                       tmp_path / "o.jsonl")
    assert code == 2 and one_line(err, "tomkit import: bad mapping: ").endswith(near)


def test_a_profile_file_typo_gets_the_closest_spelling(capsys, trace, tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text('name = "x"\ntitle = "t"\nsource = "s"\nproperties = ["integrity"]\n'
                    'notes = "n"\n')
    code, _, err = run(capsys, "check", trace, "--guarantee-file", prof)
    assert code == 2 and one_line(err, "tomkit check: ").endswith("did you mean 'note'?")


@pytest.mark.parametrize("call, kw, words", [
    ("simulate", {"protocol": "totto"}, "did you mean 'toto'?"),
    ("simulate", {"n": 3, "messages": 0}, "messages must be at least 1, got 0"),
    ("simulate", {"n": 3, "seed": -1}, "seed must be >= 0, got -1"),
    ("prove", {"rule": "toto", "n": 3, "delta": 2, "timeout": float("inf")},
     "timeout must be a positive, finite number of seconds, got inf"),
])
def test_the_apis_other_settings_are_refused_in_their_own_words(call, kw, words):
    with pytest.raises(ValueError) as ei:
        getattr(tomkit, call)(**kw)
    assert words in str(ei.value)


def test_a_reader_that_goes_away_ends_the_command_quietly(monkeypatch, trace, capsys):
    import io
    import sys

    class Gone(io.StringIO):  # tomkit watch ... | head: the pipe closes under the writer
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

    with capsys.disabled():
        monkeypatch.setattr(sys, "stdout", Gone())
        code = main(["check", str(trace)])
    assert code == 141  # as a command ended by SIGPIPE, and no traceback


@pytest.mark.parametrize("argv", [["prove", "math:sqrt", "--n", "3"],
                                  ["fuzz", "math:sqrt", "--examples", "1"]])
def test_a_rule_function_of_the_wrong_shape_is_said_before_it_is_called(capsys, argv):
    code, _, err = run(capsys, *argv)
    line = one_line(err, f"tomkit {argv[0]}: rule 'math:sqrt' must take two arguments")
    assert code == 2 and line.endswith("it takes (x, /)")


def test_a_huge_rate_window_is_judged_not_walked_slot_by_slot(tmp_path):
    path = tmp_path / "pk.jsonl"
    write_records(path, [{"trace": "t", "process": "p", "kind": "packet", "x_slot": s}
                         for s in (0, 10 ** 9)])
    # two packets 10^9 slots apart: the vectorized test cannot key such a span, and the
    # exact check walked every slot of each window (it ran for ever)
    for window, verdict in ((10 ** 20, "violated"), (10 ** 9, "holds")):
        report = tomkit.check(path, rate_avg=1, rate_window=window)
        assert str(report.outcomes[0].verdicts["rate"]) == verdict, window
