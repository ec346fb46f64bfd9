"""The rough edges a new user hits on the command line (issue 30 part 7): each wrong,
empty or odd argument gets one line saying what was given and what is wanted, before any
work is done, and the forms other subcommands accept are accepted here too."""

from __future__ import annotations

import json

import pytest
from cli_run import one_line, run

from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records

# --------------------------------------------------------------------------
# tomkit fuzz: RULE, --rule or --protocol


def test_fuzz_takes_the_rule_as_rule_flag_as_simulate_does(capsys, tmp_path):
    code, out, err = run(capsys, "fuzz", "--rule", "toto", "--n", "3", "--examples", "2",
                         "--out", tmp_path)
    assert code == 0, err
    assert "fuzzing toto n=3" in out and "dag machine" in out


def test_fuzz_with_nothing_to_fuzz_says_both_forms(capsys):
    code, _, err = run(capsys, "fuzz")
    line = one_line(err, "tomkit fuzz: nothing to fuzz")
    assert code == 2 and "tomkit fuzz toto" in line and "--protocol abcast" in line


def test_fuzz_with_a_rule_twice_names_both(capsys):
    code, _, err = run(capsys, "fuzz", "toto", "--rule", "s-toto")
    line = one_line(err, "tomkit fuzz: the rule is given twice")
    assert code == 2 and "'toto'" in line and "--rule s-toto" in line


@pytest.mark.parametrize(("protocol", "hint"), [("abcast", False), ("toto", True)])
def test_fuzz_with_a_rule_and_a_protocol_names_what_was_given(capsys, protocol, hint):
    code, _, err = run(capsys, "fuzz", "s-toto", "--protocol", protocol)
    line = one_line(err, "tomkit fuzz: a RULE ('s-toto') and --protocol")
    assert code == 2
    assert (f"--protocol {protocol} --rule s-toto" in line) == hint


# --------------------------------------------------------------------------
# tomkit simulate: refused before simulating


@pytest.mark.parametrize(("argv", "said"), [
    (["--messages", "0"], "--messages must be at least 1, got 0"),
    (["--messages", "-4"], "--messages must be at least 1, got -4"),
    (["--jitter", "-0.5"], "--jitter must be a non-negative, finite number, got -0.5"),
    (["--detection-delay", "-1"], "detection delay must be finite and >= 0, got -1.0"),
    (["--detection-delay", "inf"], "detection delay must be finite and >= 0, got inf"),
])
def test_simulate_refuses_a_run_it_cannot_make(capsys, tmp_path, argv, said):
    out = tmp_path / "run.jsonl"
    code, stdout, err = run(capsys, "simulate", "--n", "3", *argv, "--out", out)
    line = one_line(err, "tomkit simulate: ")
    assert code == 2 and said in line
    assert not out.exists()  # nothing written, no nan statistics printed
    assert "nan" not in stdout


def test_simulate_makes_the_output_folder_as_generate_does(capsys, tmp_path):
    out = tmp_path / "new" / "run.jsonl"
    code, stdout, err = run(capsys, "simulate", "--n", "3", "--messages", "5", "-q",
                            "--out", out)
    assert code == 0, err
    assert out.exists() and "wrote" in stdout


def test_simulate_refuses_an_output_folder_it_cannot_make_before_simulating(
        capsys, tmp_path):
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "run.jsonl"  # a folder below a file
    code, stdout, err = run(capsys, "simulate", "--n", "3", "--messages", "5",
                            "--out", out)
    line = one_line(err, "tomkit simulate: --out ")
    assert code == 2 and f"cannot make the folder {tmp_path / 'file'}" in line
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
    line = one_line(err, "tomkit check: bad input: ")
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


# --------------------------------------------------------------------------
# tomkit check: option values and output folders, refused before checking


@pytest.fixture
def one_trace(tmp_path):
    path = tmp_path / "t.jsonl"
    write_records(path, clean_trace("a", seed=1))
    return path


@pytest.mark.parametrize(("argv", "said"), [
    (["--latency-bound", "-1"], "--latency-bound must be positive, got -1.0"),
    (["--latency-bound", "nan"], "--latency-bound must be positive, got nan"),
    (["--latency-bound", "0"], "--latency-bound must be positive, got 0.0"),
    (["--rate-max", "-1"], "--rate-max must be >= 0, got -1"),
    (["--rate-avg", "-2", "--rate-window", "2"], "--rate-avg must be >= 0, got -2"),
    (["-p", ""], "--property '' names no property"),
    (["-p", ",,"], "--property ',,' names no property"),
])
def test_check_refuses_an_option_value_by_flag(capsys, one_trace, argv, said):
    code, out, err = run(capsys, "check", one_trace, *argv)
    line = one_line(err, "tomkit check: ")
    assert code == 2 and said in line and out == ""


@pytest.mark.parametrize("flag", ["--draw", "--html", "--plot-latency"])
def test_check_refuses_an_output_it_cannot_write_before_checking(capsys, tmp_path,
                                                                  one_trace, flag):
    (tmp_path / "f").write_text("")
    target = tmp_path / "f" / ("pics" if flag == "--draw" else "x.out")
    code, out, err = run(capsys, "check", one_trace, flag, target)
    line = one_line(err, f"tomkit check: {flag} {target}: cannot make the folder")
    assert code == 2 and out == "" and line


def test_check_makes_the_folder_of_an_html_report(capsys, tmp_path, one_trace):
    target = tmp_path / "new" / "report.html"
    code, _, err = run(capsys, "check", one_trace, "--html", target, "-q")
    assert code == 0, err
    assert "<html" in target.read_text().lower()


# --------------------------------------------------------------------------
# tomkit prove --timeout, tomkit conform DIR


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_prove_refuses_a_timeout_that_is_not_positive(capsys, value):
    code, out, err = run(capsys, "prove", "toto", "--n", "3", "--timeout", value)
    line = one_line(err, "tomkit prove: --timeout must be a positive number")
    assert code == 2 and out == "" and line


def test_conform_reads_the_trace_files_of_a_folder(capsys, tmp_path):
    import tomkit

    data = tmp_path / "runs"
    data.mkdir()
    for s in (1, 2):
        run_ = tomkit.simulate("tomp", n=3, messages=8, seed=s, trace_id=f"r{s}")
        write_records(data / f"r{s}.jsonl", run_.records)
    code, out, err = run(capsys, "conform", data, "--protocol", "tomp", "--format", "json")
    assert code == 0, err
    assert sorted(json.loads(out)["traces"]) == ["r1", "r2"]


# --------------------------------------------------------------------------
# tomkit sample, tomkit fuzz counts, simulate's --topology and --load-schedule


@pytest.mark.parametrize(("argv", "said"), [
    (["--traces", "0"], "--traces must be at least 1, got 0"),
    (["--processes", "0"], "--processes must be at least 1, got 0"),
    (["--messages", "-1"], "--messages must be at least 1, got -1"),
    (["--fault", "split-view", "--processes", "1"], "fault 'split-view' needs at least"),
])
def test_sample_refuses_counts_it_cannot_make(capsys, tmp_path, argv, said):
    out = tmp_path / "s.jsonl"
    code, _, err = run(capsys, "sample", "--out", out, *argv)
    line = one_line(err, "tomkit sample: ")
    assert code == 2 and said in line and not out.exists()


def test_sample_refuses_a_name_without_a_format_and_makes_its_folder(capsys, tmp_path):
    code, _, err = run(capsys, "sample", "--out", tmp_path / "s.txt")
    assert code == 2 and "cannot tell the format from the name" in \
        one_line(err, "tomkit sample: ")
    code, _, err = run(capsys, "sample", "--out", tmp_path / "new" / "s.parquet")
    assert code == 0, err
    assert (tmp_path / "new" / "s.parquet").exists()


@pytest.mark.parametrize(("argv", "said"), [
    (["toto", "--messages", "0"], "--messages must be at least 1, got 0"),
    (["toto", "--messages", "-1"], "--messages must be at least 1, got -1"),
    (["toto", "--n", "1"], "--n must be at least 2, got 1"),
    (["toto", "--examples", "0"], "--examples must be at least 1, got 0"),
    (["--protocol", "toto", "--crashes", "-1"], "--crashes must be at least 0, got -1"),
])
def test_fuzz_refuses_counts_by_flag(capsys, argv, said):
    code, out, err = run(capsys, "fuzz", *argv)
    assert code == 2 and said in one_line(err, "tomkit fuzz: ") and out == ""


@pytest.mark.parametrize(("flag", "presets"), [("--topology", "001-fig3"),
                                               ("--load-schedule", "001-fig5")])
def test_simulate_names_the_presets_of_an_unknown_topology_or_load(capsys, tmp_path, flag,
                                                                   presets):
    code, _, err = run(capsys, "simulate", "--n", "3", "--messages", "5", flag, "nosuch",
                       "--out", tmp_path / "x.jsonl")
    line = one_line(err, f"tomkit simulate: {flag} nosuch: neither a preset (")
    assert code == 2 and presets in line and line.endswith("nor a file")


def test_a_file_named_twice_is_checked_once_and_merged_without_a_false_alarm(capsys,
                                                                             tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    write_records(data / "a.jsonl", clean_trace("a", seed=1))
    for extra in ([], ["--merge"]):
        code, out, err = run(capsys, "check", data / "a.jsonl", data, data / "a.jsonl",
                             "--format", "json", "-q", *extra)
        assert code == 0, (extra, out, err)
        doc = json.loads(out)
        assert [t["trace"] for t in doc["traces"]] == ["a"]
