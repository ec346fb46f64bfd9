"""More rough edges a new user hits (issue 30 part 7, "more of the same kind"): usage
errors in one line of the subcommand that was called, with the closest spelling; files
after options; outputs that would be a folder, a format that cannot be drawn, a data set
folder that is not one; the options of tomkit watch and tomkit conform checked before any
work. Each mistake: one line on stderr, exit code 2, no traceback."""

from __future__ import annotations

import json

import pytest
from cli_run import one_line, run

from tomkit.traces.generate import clean_trace
from tomkit.traces.writer import write_records


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
    (["sample", "--out", "x.jsonl", "-z"], "tomkit sample: no option -z", ""),
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
    (["--workers", "0"], "--workers must be from 1 to "),
])
def test_generate_refuses_numbers_it_cannot_use(capsys, tmp_path, argv, said):
    code, _, err = run(capsys, "generate", "--out", tmp_path / "d", "--traces", "1", *argv)
    assert code == 2 and said in one_line(err, "tomkit generate: ")
    assert not (tmp_path / "d").exists()


# --------------------------------------------------------------------------
# names: the closest one offered


@pytest.mark.parametrize(("argv", "prefix", "near"), [
    (["-p", "integrty"], "tomkit check: unknown property integrty", "'integrity'"),
    (["--guarantee", "totem-ev"], "tomkit check: unknown guarantee 'totem-ev'", "'totem-evs'"),
])
def test_check_offers_the_closest_name(capsys, trace, argv, prefix, near):
    code, _, err = run(capsys, "check", trace, *argv)
    assert code == 2 and one_line(err, prefix).endswith(f"; did you mean {near}?")


def test_check_of_nothing_but_rejected_records_is_no_verdict_of_holds(capsys, tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("hello\n")
    code, out, _ = run(capsys, "check", bad, "--keep-going")
    assert code == 2
    assert out.rstrip().endswith("verdict: no trace checked")
    assert "satisfied" not in out  # no profile is satisfied by no trace


# --------------------------------------------------------------------------
# simulate, import, prove, tlc, scan, run: refused before any work


def test_simulate_names_the_seed_flag(capsys, tmp_path):
    code, _, err = run(capsys, "simulate", "--seed", "-1", "--out", tmp_path / "x.jsonl")
    assert code == 2 and one_line(err, "tomkit simulate: --seed must be >= 0, got -1")


def test_import_says_which_file_is_missing_and_checks_out_first(capsys, tmp_path):
    code, _, err = run(capsys, "import", "--format", "jepsen", tmp_path / "h.edn",
                       "--out", tmp_path / "x.jsonl")
    assert code == 2 and one_line(err, f"tomkit import: {tmp_path / 'h.edn'}: No such file")
    code, _, err = run(capsys, "import", "--format", "jepsen", tmp_path, "--out",
                       tmp_path / "x.jsonl")
    assert code == 2 and one_line(err, f"tomkit import: {tmp_path}: Is a directory")
    code, _, err = run(capsys, "import", "--format", "jepsen", tmp_path / "h.edn",
                       "--out", tmp_path / "x.txt")
    assert code == 2 and "cannot tell the format from the name" in one_line(
        err, f"tomkit import: --out {tmp_path / 'x.txt'}")


@pytest.mark.parametrize(("argv", "said"), [
    (["totto"], "unknown rule 'totto'"),  # not that --n is missing
    (["s-tot", "--n", "3"], "did you mean 's-toto'?"),
    (["toto", "--n", "1"], "--n must be at least 2, got 1"),
    (["toto", "--n", "1-1"], "--n must be at least 2, got 1"),
])
def test_prove_says_the_first_mistake(capsys, argv, said):
    code, out, err = run(capsys, "prove", *argv)
    assert code == 2 and said in one_line(err, "tomkit prove: ") and out == ""


@pytest.mark.parametrize(("argv", "said"), [
    (["ABCAST", "--workers", "0"], "--workers must be from 1 to "),
    (["ABCAST", "--workers", "100000"], "--workers must be from 1 to "),
    (["ABCAST", "--timeout", "-1"], "--timeout must be a positive number of seconds"),
    (["ABCAST", "--simulate", "--depth", "0"], "--depth must be at least 1 step, got 0"),
    (["abcst"], "abcst: neither a .tla file nor a spec tomkit ships"),
])
def test_tlc_refuses_before_starting_java(capsys, argv, said):
    code, out, err = run(capsys, "tlc", *argv)
    line = one_line(err, "tomkit tlc: ")
    assert code == 2 and said in line and out == ""


def test_tlc_finds_a_shipped_spec_by_its_name_in_any_case():
    from tomkit.cli.tlc import shipped_spec

    assert shipped_spec("abcast_earlydelivery").endswith(
        "ABCAST/ABCAST_EarlyDelivery.tla")
    with pytest.raises(ValueError, match="did you mean 'ABCAST'"):
        shipped_spec("abcst")
    assert shipped_spec("./mine.tla") == "./mine.tla"  # a path: the runner's to judge


def test_scan_refuses_a_missing_or_empty_local_input_before_spark(capsys, tmp_path):
    pytest.importorskip("pyspark")
    code, _, err = run(capsys, "scan", tmp_path / "missing")
    assert code == 2 and one_line(err, f"tomkit scan: {tmp_path / 'missing'}: no such file")
    (tmp_path / "d" / "_tmp").mkdir(parents=True)
    (tmp_path / "d" / "_tmp" / "a.parquet").write_text("")
    code, _, err = run(capsys, "scan", tmp_path / "d")
    assert code == 2 and "no trace file (.parquet, .jsonl, ...) below it" in one_line(
        err, f"tomkit scan: {tmp_path / 'd'}: ")


@pytest.fixture
def node(tmp_path, monkeypatch):
    """An executable node program in the working folder, named without ./"""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "node.sh"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "dir").mkdir()
    return "node.sh"


@pytest.mark.parametrize(("argv", "said"), [
    (["--bin", "no-such-node"], "--bin no-such-node: no such program"),
    (["--bin", "dir"], "--bin dir: a folder, not a program"),
    (["--bin", "notes.txt"], "--bin notes.txt: not executable (chmod +x notes.txt)"),
    (["--bin", "node.sh", "--time-limit", "0"], "--time-limit must be > 0, got 0.0"),
    (["--bin", "node.sh", "--rate", "-1"], "--rate must be >= 0, got -1.0"),
    (["--bin", "node.sh", "--key-count", "0"], "--key-count must be at least 1, got 0"),
    (["--bin", "node.sh", "--node-count", "10000000"], "(ulimit -n): at most"),
])
def test_run_refuses_before_making_the_run_folder(capsys, tmp_path, node, argv, said):
    import resource

    if "ulimit" in said and \
            resource.getrlimit(resource.RLIMIT_NOFILE)[0] == resource.RLIM_INFINITY:
        pytest.skip("no limit on open files here")
    code, out, err = run(capsys, "run", "-w", "echo", *argv)
    assert code == 2 and said in one_line(err, "tomkit run: ") and out == ""
    assert not (tmp_path / "store").exists()


def test_run_runs_a_node_of_the_working_folder_named_without_a_slash(capsys, tmp_path,
                                                                    node):
    code, _, err = run(capsys, "run", "-w", "echo", "--bin", node, "--node-count", "1",
                       "--time-limit", "1")
    # started (not "no such file"): the node exits before answering init
    assert code == 2 and "exited with code 0 before answering init" in err


# --------------------------------------------------------------------------
# tomkit simulate: a run that cannot fit in memory, refused before it fills it


@pytest.mark.parametrize(("argv", "said"), [
    (["--messages", "100000000000"], "at least 900,000,000,000 records"),
    (["--n", "100000", "--messages", "1"], "100000x100000 link tables"),
])
def test_simulate_refuses_a_run_beyond_the_machines_memory(capsys, tmp_path, argv, said):
    code, out, err = run(capsys, "simulate", *argv, "--out", tmp_path / "x.jsonl")
    line = one_line(err, "tomkit simulate: --n ")
    assert code == 2 and said in line and "and this machine has" in line and out == ""


def test_the_memory_bound_is_a_lower_bound_that_admits_real_runs():
    from tomkit.cli.simulate import beyond_memory

    gb = 1 << 30
    # the run (160,000 deliveries, 341,040 records, about 210 MB) fits in 1 GB
    assert beyond_memory(8, 20000, memory=gb) is None
    assert "about 1 GB" in beyond_memory(8, 600_000, memory=gb)
    # with crashes only the sends are certain
    assert beyond_memory(8, 4_000_000, crashes=True, memory=gb) is None
