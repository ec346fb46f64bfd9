"""More rough edges a new user hits (issue 30 part 7, "more of the same kind"): usage
errors in one line of the subcommand that was called, with the closest spelling; files
after options; outputs that would be a folder, a format that cannot be drawn, a data set
folder that is not one; the options of tomkit watch and tomkit conform checked before any
work. Each mistake: one line on stderr, exit code 2, no traceback."""

from __future__ import annotations

import json

import pytest

from tomkit.cli import main
from tomkit.traces.generate import clean_trace
from tomkit.traces.writer import write_records


def run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:  # argparse's own exits (usage errors, --help)
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str, prefix: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err and "usage:" not in err
    return lines[0]


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.jsonl"
    write_records(path, clean_trace("a", seed=1))
    return path


# --------------------------------------------------------------------------
# argparse's errors: one line, of the subcommand, with the closest spelling


@pytest.mark.parametrize(("argv", "prefix", "said"), [
    (["check", "T", "--scope", "everyone"], "tomkit check: argument --scope: invalid choice",
     "'everyone'"),
    (["simulate", "--protocol", "totto"], "tomkit simulate: argument --protocol",
     "did you mean 'toto'?"),
    (["chek", "T"], "tomkit: argument command: invalid choice", "did you mean 'check'?"),
    (["check", "T", "--lateny-bound", "3"], "tomkit check: no option --lateny-bound",
     "did you mean '--latency-bound'?"),
    (["check", "T", "--nosuch"], "tomkit check: no option --nosuch (", ""),
    (["prove", "toto", "abcast"], "tomkit prove: one argument too many: 'abcast'", ""),
    (["sample", "--out", "x.jsonl", "-q"], "tomkit sample: no option -q", ""),
    (["check", "T", "--latency-bound", "abc"], "tomkit check: argument --latency-bound",
     "invalid float value: 'abc'"),
])
def test_a_usage_error_is_one_line_of_the_subcommand(capsys, trace, argv, prefix, said):
    code, out, err = run(capsys, *(trace if a == "T" else a for a in argv))
    line = one_line(err, prefix)
    assert code == 2 and said in line and out == ""
    assert line.endswith("--help gives the usage)")


def test_an_unknown_option_suggests_no_far_spelling(capsys):
    # the dashes every flag shares do not make --join look like --n
    code, _, err = run(capsys, "fuzz", "--protocol", "toto-dynamic", "--join", "p1@0.1")
    line = one_line(err, "tomkit fuzz: no option --join")
    assert code == 2 and "did you mean" not in line


def test_files_may_follow_options(capsys, trace, tmp_path):
    other = tmp_path / "u.jsonl"
    write_records(other, clean_trace("b", seed=2))
    code, out, err = run(capsys, "check", trace, "--liveness", other, "--format", "json")
    assert code == 0, err
    assert sorted(t["trace"] for t in json.loads(out)["traces"]) == ["a", "b"]


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch, trace):
    import tomkit.cli.check as check_cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(check_cli, "run", interrupted)
    code, _, err = run(capsys, "check", trace)
    assert code == 130 and one_line(err, "tomkit check: interrupted")


# --------------------------------------------------------------------------
# tomkit check: outputs refused before checking


def test_check_refuses_a_folder_as_the_html_report(capsys, tmp_path, trace):
    (tmp_path / "pages").mkdir()
    code, out, err = run(capsys, "check", trace, "--html", tmp_path / "pages")
    line = one_line(err, f"tomkit check: --html {tmp_path / 'pages'}: a folder")
    assert code == 2 and out == "" and line


@pytest.mark.parametrize("name", ["lat.txt", "lat.html"])
def test_check_refuses_a_plot_format_it_cannot_draw(capsys, tmp_path, trace, name):
    code, out, err = run(capsys, "check", trace, "--plot-latency", tmp_path / name)
    line = one_line(err, f"tomkit check: --plot-latency {tmp_path / name}: cannot draw .")
    assert code == 2 and out == "" and ".png, .svg" in line
    assert not (tmp_path / name).exists()


def test_check_draws_a_plot_named_svg(capsys, tmp_path, trace):
    code, _, err = run(capsys, "check", trace, "--plot-latency", tmp_path / "lat.svg", "-q")
    assert code == 0, err
    assert (tmp_path / "lat.svg").read_text().lstrip().startswith("<?xml")


# --------------------------------------------------------------------------
# tomkit conform: a protocol option's value refused before a trace is read


def test_conform_refuses_an_unknown_variant_in_one_line(capsys, trace):
    code, out, err = run(capsys, "conform", "--protocol", "tomp", "--variant", "nosuch",
                         trace)
    line = one_line(err, "tomkit conform: tomp: --variant must be one of")
    assert code == 2 and "'nosuch'" in line and out == ""


# --------------------------------------------------------------------------
# tomkit watch: what it cannot follow


@pytest.mark.parametrize(("argv", "said"), [
    (["--idle-exit", "-1"], "--idle-exit must be a number of seconds >= 0, got -1.0"),
    (["--poll", "0"], "--poll must be a positive number of seconds, got 0.0"),
    (["--timeout", "-5"], "--timeout must be a positive number of seconds, got -5.0"),
    (["--summary-every", "nan"], "--summary-every must be a number of seconds >= 0"),
])
def test_watch_refuses_a_number_it_cannot_use(capsys, trace, argv, said):
    code, out, err = run(capsys, "watch", trace, *argv)
    assert code == 2 and said in one_line(err, "tomkit watch: ") and out == ""


def test_watch_refuses_a_folder_a_parquet_file_and_a_state_file(capsys, tmp_path, trace):
    code, _, err = run(capsys, "watch", tmp_path, "--idle-exit", "1")
    assert code == 2 and "a folder; name the log files in it" in one_line(
        err, f"tomkit watch: {tmp_path}: ")
    pq = tmp_path / "t.parquet"
    write_records(pq, clean_trace("a", seed=1))
    code, _, err = run(capsys, "watch", pq, "--idle-exit", "1")
    assert code == 2 and f"tomkit check {pq} reads it" in one_line(err, "tomkit watch: ")
    code, _, err = run(capsys, "watch", trace, "--state", trace, "--idle-exit", "1")
    assert code == 2 and one_line(err, f"tomkit watch: --state {trace}: a file")
    code, _, err = run(capsys, "watch", trace, "--out", tmp_path, "--idle-exit", "1")
    assert code == 2 and one_line(err, f"tomkit watch: --out {tmp_path}: a folder")


def test_watch_of_a_log_that_never_appeared_is_no_verdict_of_holds(capsys, tmp_path, trace):
    missing = tmp_path / "later.jsonl"
    code, out, err = run(capsys, "watch", trace, missing, "--idle-exit", "0.3",
                         "--poll", "0.05", "--summary-every", "0")
    assert code == 2 and "verdict" in out
    assert one_line(err, f"tomkit watch: {missing}: never appeared")


# --------------------------------------------------------------------------
# tomkit generate: --out is replaced whole


def test_generate_never_replaces_a_file_or_a_folder_it_did_not_write(capsys, tmp_path,
                                                                     trace):
    before = trace.read_bytes()
    code, _, err = run(capsys, "generate", "--out", trace, "--traces", "1", "-q")
    assert code == 2 and one_line(err, f"tomkit generate: --out {trace}: a file")
    assert trace.read_bytes() == before
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    code, _, err = run(capsys, "generate", "--out", mine, "--traces", "1", "-q")
    assert code == 2 and "did not write (no _generate.json)" in one_line(
        err, "tomkit generate: ")
    assert (mine / "notes.txt").read_text() == "keep me"
    code, _, err = run(capsys, "generate", "--out", tmp_path / "d.parquet", "--traces", "1")
    assert code == 2 and "a trace file's name" in one_line(err, "tomkit generate: ")


def test_generate_replaces_its_own_data_set(capsys, tmp_path):
    out = tmp_path / "data"
    for seed in ("1", "2"):
        code, stdout, err = run(capsys, "generate", "--out", out, "--traces", "1",
                                "--protocol", "synthetic", "--seed", seed, "-q")
        assert code == 0, err
        assert f"seed {seed}" in stdout
    assert json.loads((out / "_generate.json").read_text())["seed"] == 2


@pytest.mark.parametrize(("argv", "said"), [
    (["--faulty", "2"], "--faulty is a fraction of the traces, from 0 to 1, got 2.0"),
    (["--faulty", "-0.1"], "from 0 to 1, got -0.1"),
    (["--workers", "0"], "--workers must be at least 1, got 0"),
])
def test_generate_refuses_numbers_it_cannot_use(capsys, tmp_path, argv, said):
    code, _, err = run(capsys, "generate", "--out", tmp_path / "d", "--traces", "1", *argv)
    assert code == 2 and said in one_line(err, "tomkit generate: ")
    assert not (tmp_path / "d").exists()
