"""The rough edges a new user hits on the command line (issue 30 part 7): each wrong,
empty or odd argument gets one line saying what was given and what is wanted, before any
work is done, and the forms other subcommands accept are accepted here too."""

from __future__ import annotations

import json

import pytest

from tomkit.cli import main
from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line_error(err: str, prefix: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err
    return lines[0]


# --------------------------------------------------------------------------
# tomkit fuzz: RULE, --rule or --protocol


def test_fuzz_takes_the_rule_as_rule_flag_as_simulate_does(capsys, tmp_path):
    code, out, err = run(capsys, "fuzz", "--rule", "toto", "--n", "3", "--examples", "2",
                         "--out", tmp_path)
    assert code == 0, err
    assert "fuzzing toto n=3" in out and "dag machine" in out


def test_fuzz_with_nothing_to_fuzz_says_both_forms(capsys):
    code, _, err = run(capsys, "fuzz")
    line = _one_line_error(err, "tomkit fuzz: nothing to fuzz")
    assert code == 2 and "tomkit fuzz toto" in line and "--protocol abcast" in line


def test_fuzz_with_a_rule_twice_names_both(capsys):
    code, _, err = run(capsys, "fuzz", "toto", "--rule", "s-toto")
    line = _one_line_error(err, "tomkit fuzz: the rule is given twice")
    assert code == 2 and "'toto'" in line and "--rule s-toto" in line


@pytest.mark.parametrize(("protocol", "hint"), [("abcast", False), ("toto", True)])
def test_fuzz_with_a_rule_and_a_protocol_names_what_was_given(capsys, protocol, hint):
    code, _, err = run(capsys, "fuzz", "s-toto", "--protocol", protocol)
    line = _one_line_error(err, "tomkit fuzz: a RULE ('s-toto') and --protocol")
    assert code == 2
    assert (f"--protocol {protocol} --rule s-toto" in line) == hint


# --------------------------------------------------------------------------
# tomkit simulate: refused before simulating


@pytest.mark.parametrize(("argv", "said"), [
    (["--messages", "0"], "--messages must be at least 1, got 0"),
    (["--messages", "-4"], "--messages must be at least 1, got -4"),
    (["--jitter", "-0.5"], "jitter must be finite and >= 0, got -0.5"),
    (["--detection-delay", "-1"], "detection delay must be finite and >= 0, got -1.0"),
    (["--detection-delay", "inf"], "detection delay must be finite and >= 0, got inf"),
])
def test_simulate_refuses_a_run_it_cannot_make(capsys, tmp_path, argv, said):
    out = tmp_path / "run.jsonl"
    code, stdout, err = run(capsys, "simulate", "--n", "3", *argv, "--out", out)
    line = _one_line_error(err, "tomkit simulate: ")
    assert code == 2 and said in line
    assert not out.exists()  # nothing written, no nan statistics printed
    assert "nan" not in stdout


def test_simulate_refuses_an_output_folder_that_does_not_exist_before_simulating(
        capsys, tmp_path):
    out = tmp_path / "missing" / "run.jsonl"
    code, stdout, err = run(capsys, "simulate", "--n", "3", "--messages", "5",
                            "--out", out)
    line = _one_line_error(err, "tomkit simulate: --out ")
    assert code == 2 and f"the folder {tmp_path / 'missing'} does not exist" in line
    assert "simulated" not in stdout


# --------------------------------------------------------------------------
# tomkit check DIR reads the trace files below it, as tomkit scan does


def test_check_a_directory_reads_its_trace_files(capsys, tmp_path):
    data = tmp_path / "data"
    (data / "protocol=toto").mkdir(parents=True)
    write_records(data / "a.jsonl", clean_trace("a", seed=1))
    recs, _ = faulty_trace("bad", "swap", seed=3)
    write_records(data / "protocol=toto" / "b.parquet", recs)
    (data / "_SUCCESS").write_text("")  # skipped, as the scan skips it
    (data / ".hidden").mkdir()
    (data / ".hidden" / "junk.jsonl").write_text("not json\n")
    code, out, err = run(capsys, "check", data, "--format", "json", "-q")
    assert code == 1, err
    doc = json.loads(out)
    assert sorted(t["trace"] for t in doc["traces"]) == ["a", "bad"]
    assert doc["verdict"] == "violated"


def test_check_an_empty_directory_is_bad_input_naming_it(capsys, tmp_path):
    (tmp_path / "_logs").mkdir()
    (tmp_path / "_logs" / "x.jsonl").write_text("")
    code, _, err = run(capsys, "check", tmp_path)
    line = _one_line_error(err, "tomkit check: bad input: ")
    assert code == 2 and f"{tmp_path}: a directory with no trace file in it" in line


# --------------------------------------------------------------------------
# tomkit conform: the report object of the API is what --format json prints


def test_conform_report_is_one_shape_in_the_api_and_the_command(capsys, tmp_path):
    import tomkit

    runs = [tomkit.simulate("tomp", n=3, messages=12, seed=s, trace_id=f"r{s}")
            for s in (1, 2)]
    path = tmp_path / "two.jsonl"
    write_records(path, [r for run_ in runs for r in run_.records])
    report = tomkit.conform(str(path), "tomp")
    assert list(report.traces) == ["r1", "r2"]  # a file of two traces: each replayed alone
    assert report.conforms and report.exit_code() == 0
    assert set(report.processes("r1")) == {"p0", "p1", "p2"}
    with pytest.raises(ValueError, match="the report has 2 traces"):
        report.processes()
    code, out, _ = run(capsys, "conform", path, "--protocol", "tomp", "--format", "json")
    assert code == 0 and json.loads(out) == report.to_dict()
    one = tomkit.conform(runs[0].records, "tomp")
    assert one.processes()["p1"].differences == []
    # check, prove and conform reports all give plain data
    assert json.dumps(one.to_dict())
