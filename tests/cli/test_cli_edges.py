"""Rough edges of issue 30 part 7, round 7, on the command line: Ctrl-C while a command
writes a file leaves a file the readers take (complete records, the count said on
stderr) or says plainly that nothing was written; never a truncated file, never a
silent deletion."""

from __future__ import annotations

import json
import os

import pytest
from cli_run import one_line, run

from tomkit.traces import generate as traces_generate
from tomkit.traces.reader import read_records


def _interrupted_at(monkeypatch, owner, name, k):
    """``owner.name`` raises KeyboardInterrupt (as Ctrl-C would) on its call ``k``."""
    real = getattr(owner, name)
    calls = []

    def fn(*args, **kwargs):
        calls.append(1)
        if len(calls) == k:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, fn)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_a_stopped_sample_keeps_the_whole_traces_made_so_far(capsys, monkeypatch, tmp_path,
                                                             suffix):
    out = tmp_path / f"s{suffix}"
    _interrupted_at(monkeypatch, traces_generate, "clean_trace", 8)
    code, _, err = run(capsys, "sample", "--out", out, "--traces", "50", "-q")
    kept = read_records(out)
    assert code == 130
    assert err.splitlines() == [
        "tomkit sample: interrupted",
        f"tomkit sample: kept {len(kept):,} complete records in {out}, a valid file that "
        "ends where the run was stopped",
        "tomkit sample: they are the first 7 of 50 traces, each whole (seed 1)"]
    assert sorted({r["trace"] for r in kept}) == [f"t{i}" for i in range(7)]
    code, out_text, _ = run(capsys, "check", out)
    assert code == 0 and "verdict: holds" in out_text


def test_a_sample_stopped_before_its_first_trace_leaves_no_file_and_says_so(
        capsys, monkeypatch, tmp_path):
    out = tmp_path / "s.jsonl"
    _interrupted_at(monkeypatch, traces_generate, "clean_trace", 1)
    code, _, err = run(capsys, "sample", "--out", out, "--traces", "5", "-q")
    assert code == 130 and not out.exists()
    assert err.splitlines()[1] == (f"tomkit sample: removed {out}: stopped before any "
                                   "record was written")


def test_a_simulation_stopped_says_nothing_was_written(capsys, monkeypatch, tmp_path):
    from tomkit.cli import simulate as cli_simulate

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_simulate, "simulate", stopped)
    out = tmp_path / "run.jsonl"
    code, _, err = run(capsys, "simulate", "--out", out, "--messages", "10", "--seed", "4")
    assert code == 130 and not out.exists()
    assert err.splitlines() == [
        "tomkit simulate: interrupted",
        f"tomkit simulate: nothing written to {out}: stopped while simulating, before the "
        "trace is written (seed 4)"]


@pytest.mark.parametrize("before", [False, True])
def test_a_stopped_generate_says_its_folder_was_left_as_it_was(capsys, monkeypatch, tmp_path,
                                                               before):
    from tomkit.cli import generate as cli_generate

    out = tmp_path / "data"
    if before:  # a data set of an earlier run
        out.mkdir()
        (out / "_generate.json").write_text("{}")

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_generate, "write_bulk", stopped)
    code, _, err = run(capsys, "generate", "--protocol", "synthetic", "--traces", "10",
                       "--out", out, "-q")
    assert code == 130 and os.path.exists(out) == before
    assert err.splitlines()[1] == (
        f"tomkit generate: {out} {'left as it was' if before else 'not made'}: a data set "
        "replaces it only once complete (the part made so far was removed)")


# ---- tomkit sample: numbers the machine cannot hold, a seed numpy refuses ---------------

@pytest.mark.parametrize("argv, said", [
    (["--traces", "99999999999999999999999"], "--traces 99999999999999999999999: at least "),
    (["--processes", "100000000", "--messages", "100000"],
     "--processes 100000000 --messages 100000: a trace is made whole in memory, at least "),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--fault", "swapp"], "did you mean 'swap'?"),
])
def test_sample_refuses_what_cannot_be_made_before_writing(capsys, tmp_path, argv, said):
    out = tmp_path / "s.jsonl"
    code, _, err = run(capsys, "sample", "--out", out, *argv)
    assert code == 2 and said in one_line(err, "tomkit sample: ") and not out.exists()


def test_sample_refuses_a_folder_for_out(capsys, tmp_path):
    folder = tmp_path / "runs.jsonl"
    folder.mkdir()
    code, _, err = run(capsys, "sample", "--out", folder)
    assert code == 2 and not os.listdir(folder)
    assert one_line(err, "tomkit sample: ") == (f"tomkit sample: --out {folder}: a folder; "
                                                "give a file name")


def test_the_disk_bound_is_a_lower_bound_of_what_sample_writes(capsys, tmp_path):
    # what the bound assumes per record is at most what the default traces take
    from argparse import Namespace

    from tomkit.cli.sample import DISK_BYTES

    for suffix, kind in ((".jsonl", "jsonl"), (".jsonl.gz", "compressed"),
                         (".parquet", "compressed")):
        out = tmp_path / f"s{suffix}"
        assert run(capsys, "sample", "--out", out, "--traces", "40", "-q")[0] == 0
        assert out.stat().st_size >= 40 * 12 * 5 * DISK_BYTES[kind], suffix
    from tomkit.cli.sample import beyond_machine

    args = Namespace(out=str(tmp_path / "s.jsonl"), traces=1000, processes=4, messages=12)
    assert beyond_machine(args, "jsonl", free=10**9) is None
    assert "its disk has 977 KB free" in beyond_machine(args, "jsonl", free=10**6)


# ---- simulate: numbers by their flags, before the seed line; none that never ends -------

@pytest.mark.parametrize("argv, said", [
    (["--mean-delay", "inf"], "--mean-delay must be a positive, finite number, got inf"),
    (["--rate", "inf"], "--rate must be a positive, finite number, got inf"),
    (["--rate", "0"], "--rate must be a positive, finite number, got 0.0"),
    (["--gamma-cv2", "nan"], "--gamma-cv2 must be a positive, finite number, got nan"),
    (["--jitter", "-1"], "--jitter must be a non-negative, finite number, got -1.0"),
    (["--n", "1"], "--n must be at least 2 processes, got 1"),
])
def test_simulate_says_a_bad_number_by_its_flag_before_anything(capsys, tmp_path, argv, said):
    # an infinite mean delay ran for ever; the others were said after "seed 1" on
    # stdout, by the model's names (rate, mean delay, jitter)
    code, out, err = run(capsys, "simulate", "--out", tmp_path / "r.jsonl", *argv)
    assert code == 2 and out == ""
    assert one_line(err, "tomkit simulate: ") == f"tomkit simulate: {said}"


@pytest.mark.parametrize("kw", [{"rate": float("inf")}, {"rate": 0}])
def test_the_api_refuses_an_infinite_rate_too(kw):
    import tomkit

    with pytest.raises(ValueError, match="rate must be a positive, finite number"):
        tomkit.simulate("toto", n=3, messages=5, **kw)


def test_an_infinite_mean_delay_is_refused_where_delays_are_made():
    from tomkit.model.net.links import Delay

    with pytest.raises(ValueError, match="mean delay must be a positive, finite number"):
        Delay("exponential", float("inf"))


def test_fuzz_takes_runs_for_examples(capsys):
    # "--runs" was "no option --runs", with no closest spelling; the docs say runs
    from tomkit.cli import build_parser

    args = build_parser("fuzz").parse_args(["fuzz", "toto", "--runs", "7"])
    assert args.examples == 7
    code, _, err = run(capsys, "fuzz", "toto", "--runs", "0")
    assert code == 2
    assert one_line(err, "tomkit fuzz: ") == "tomkit fuzz: --examples must be at least 1, got 0"


# ---- the words before the subcommand ----------------------------------------------------

def test_options_before_the_subcommand_are_said_with_the_line_meant(capsys):
    # argparse took the option's value for the subcommand: "invalid choice: '1'"
    code, _, err = run(capsys, "--seed", "1", "simulate", "--out", "a.jsonl")
    assert code == 2 and one_line(err, "tomkit: ") == (
        "tomkit: options go after the subcommand: tomkit simulate --seed 1 --out a.jsonl "
        "(tomkit --help gives the usage)")


def test_a_file_where_the_subcommand_goes_is_pointed_to_check(capsys, tmp_path):
    trace = tmp_path / "run.jsonl"
    trace.write_text("")
    code, _, err = run(capsys, trace, "--liveness")
    assert code == 2 and one_line(err, "tomkit: ") == (
        f"tomkit: '{trace}' is a file, not a subcommand; to check it: tomkit check {trace} "
        "--liveness (tomkit --help gives the usage)")


def test_help_as_a_word_gives_the_help_asked_for(capsys):
    code, out, _ = run(capsys, "help", "check")
    assert code == 0 and out.startswith("usage: tomkit check ")
    code, out, _ = run(capsys, "help")
    assert code == 0 and out.startswith("usage: tomkit ")
    code, _, err = run(capsys, "help", "chek")
    assert code == 2 and "did you mean 'check'?" in one_line(err, "tomkit: ")


# ---- generate: numbers the machine cannot serve ------------------------------------------

@pytest.mark.parametrize("argv, said", [
    (["--traces", "99999999999999999999"], "--traces 99999999999999999999: at least "),
    (["--traces", "10", "--workers", "100000"], "--workers must be from 1 to "),
    (["--traces", "10", "--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--traces", "10", "--protocol", "totto"], "did you mean 'toto'?"),
])
def test_generate_refuses_what_cannot_be_served_before_any_work(capsys, tmp_path, argv, said):
    # numpy's "Maximum allowed dimension exceeded"; 100,000 workers forked until the
    # machine refused; numpy's "expected non-negative integer"; no closest protocol
    out = tmp_path / "data"
    code, _, err = run(capsys, "generate", "--out", out, *argv)
    assert code == 2 and said in one_line(err, "tomkit generate: ")
    assert os.listdir(tmp_path) == []


def test_generate_disk_bound_is_below_what_a_data_set_takes(tmp_path):
    from argparse import Namespace

    from tomkit.cli.generate import TRACE_BYTES, bad_numbers

    args = Namespace(out=str(tmp_path / "d"), traces=1000, faulty=0.0, seed=1, workers=None)
    assert bad_numbers(args, free=1000 * TRACE_BYTES) is None
    assert "ask for fewer" in bad_numbers(args, free=1000 * TRACE_BYTES - 1)


def test_a_node_that_breaks_the_protocol_gets_one_line_and_no_asyncio_traceback(tmp_path):
    # /bin/cat answers init with the init itself (src is the client's id): the run's one
    # line was followed by asyncio's "_GatheringFuture exception was never retrieved"
    # and a traceback of the cancelled starts
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tomkit", "run", "-w", "echo", "--bin",
                           "/bin/cat", "--node-count", "2", "--time-limit", "1", "--out",
                           str(tmp_path / "run"), "--seed", "1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "never retrieved" not in proc.stderr
    assert "not the node's own id" in proc.stderr  # n0's or n1's, whichever is first


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_importing_a_trace_as_a_jepsen_history_points_to_check(capsys, tmp_path, suffix):
    # "s.jsonl:1: field 'type': operation without type"; a Parquet file "not EDN"
    trace = tmp_path / f"s{suffix}"
    assert run(capsys, "sample", "--out", trace, "-q")[0] == 0
    code, _, err = run(capsys, "import", "--format", "jepsen", trace, "--out",
                       tmp_path / "y.jsonl")
    assert code == 2 and one_line(err, "tomkit import: ") == (
        f"tomkit import: {trace} is a tomkit trace already (its first record has trace, "
        f"process and kind), not a Jepsen history: check it with tomkit check {trace}")


def test_a_bad_jepsen_history_is_still_said_as_before(capsys, tmp_path):
    history = tmp_path / "h.json"
    history.write_text('{"type":\n')
    code, _, err = run(capsys, "import", "--format", "jepsen", history, "--out",
                       tmp_path / "y.jsonl")
    assert code == 2 and "not JSON" in one_line(err, "tomkit import: bad input: ")


# ---- empty names (an unset shell variable) ----------------------------------------------

@pytest.mark.parametrize("argv, said", [
    (["simulate", "--out", "", "--messages", "5"],
     "tomkit simulate: --out is an empty name; give a file name"),
    (["simulate", "--out", "T", "--trace-id", "", "--messages", "5"],
     "tomkit simulate: --trace-id must not be empty"),
    (["sample", "--out", ""], "tomkit sample: --out is an empty name; give a file name"),
    (["check", ""], "tomkit check: an empty file name (''); give a file or folder"),
    (["conform", "", "--protocol", "toto"],
     "tomkit conform: an empty file name (''); give a file or folder"),
])
def test_an_empty_name_is_said_as_one(capsys, tmp_path, argv, said):
    # ": cannot tell the format", ": file not found"; an empty trace id was a
    # TraceFormatError traceback after the simulation
    argv = [str(tmp_path / "r.jsonl") if a == "T" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and "seed" not in out and one_line(err, "tomkit ") == said


def test_the_api_refuses_an_empty_trace_id():
    import tomkit

    with pytest.raises(ValueError, match="trace_id must not be empty"):
        tomkit.simulate("toto", n=3, messages=5, trace_id="")


# ---- a first file that is no trace: what it seems to be, and what to do -----------------

RECS = [{"trace": "t", "process": "p", "kind": "send", "msg": "a"},
        {"trace": "t", "process": "p", "kind": "deliver", "msg": "a"}]


@pytest.mark.parametrize("name, content, said", [
    ("run.json", json.dumps(RECS, indent=1),
     "; it holds one JSON array, not JSON Lines (one record per line): jq -c '.[]' "),
    ("run.json", "\ufeff" + json.dumps(RECS), "; it holds one JSON array"),
    ("run.csv", "trace,process,kind,msg\nt,p,send,a\n",
     "; it looks like CSV: tomkit import --mapping MAP.toml "),
    ("run.parquet", "\n".join(map(json.dumps, RECS)) + "\n",
     "not a parquet file; it reads as JSON Lines: name it .jsonl"),
])
@pytest.mark.parametrize("command", [["check"], ["conform", "--protocol", "toto"]])
def test_a_file_of_another_kind_is_named_with_what_to_do(capsys, tmp_path, name, content,
                                                         said, command):
    # "invalid JSON at column 2: Expecting value"; "Parquet magic bytes not found"
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code, _, err = run(capsys, command[0], path, *command[1:])
    assert code == 2 and said in one_line(err, f"tomkit {command[0]}: bad input: ")


def test_a_bad_record_of_a_trace_gets_no_guess(capsys, tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"process": "p", "kind": "send", "msg": "a"}\n')
    code, _, err = run(capsys, "check", path)
    assert code == 2 and one_line(err, "tomkit check: bad input: ").endswith(
        "run.jsonl:1: field 'trace': missing required field")


# ---- scan --out, replaced whole: never the user's file, folder or input ----------------

@pytest.fixture
def data_set(capsys, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    assert run(capsys, "sample", "--out", folder / "s.jsonl", "--traces", "2", "-q")[0] == 0
    return folder


@pytest.mark.parametrize("out, said", [
    ("data/s.jsonl", "a file; --out takes a folder, which is replaced whole"),
    ("mine", "a folder that tomkit scan did not write (no report.json)"),
    ("data", "holds the input"),
    (".", "holds the input"),
    ("data/verdicts", "inside the input"),
])
def test_scan_refuses_an_out_it_would_destroy(capsys, tmp_path, data_set, out, said,
                                              monkeypatch):
    # the trace file, the user's folder and the input were replaced by the scan's folder,
    # with no word; an out inside the input was read as traces by the next scan
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "scan", "data", "--out", out)
    assert code == 2 and said in one_line(err, f"tomkit scan: --out {out}: ")
    assert (data_set / "s.jsonl").is_file() and (tmp_path / "mine" / "notes.txt").exists()


def test_scan_replaces_its_own_out(capsys, tmp_path, data_set):
    out = tmp_path / "verdicts"
    for _ in range(2):
        code, stdout, err = run(capsys, "scan", data_set, "--out", out)
        assert code == 0 and "verdict: holds" in stdout, err
    assert (out / "report.json").exists()


def test_run_refuses_a_file_for_its_folder(capsys, tmp_path):
    # a FileExistsError traceback from the harness's mkdir
    trace = tmp_path / "s.jsonl"
    trace.write_text("keep me")
    code, _, err = run(capsys, "run", "-w", "echo", "--bin", "/bin/cat", "--node-count", "1",
                       "--time-limit", "1", "--out", trace)
    assert code == 2 and one_line(err, "tomkit run: ") == (
        f"tomkit run: --out {trace}: a file; --out takes the run's folder")
    assert trace.read_text() == "keep me"


@pytest.mark.parametrize("argv", [
    ["fuzz", "majority", "--n", "4", "--delta", "2", "--examples", "1"],
    ["prove", "toto", "--n", "3", "--delta", "2"],
    ["tlc", "ABCAST"],
])
def test_an_out_folder_that_is_a_file_is_refused_before_the_work(capsys, tmp_path, argv):
    # fuzz found its failure, then stopped with a FileExistsError traceback, the finding
    # lost
    trace = tmp_path / "s.jsonl"
    trace.write_text("keep me")
    code, out, err = run(capsys, *argv, "--out", trace)
    assert code == 2 and out == "" and trace.read_text() == "keep me"
    assert one_line(err, f"tomkit {argv[0]}: ") == (
        f"tomkit {argv[0]}: --out {trace}: a file; --out takes a folder")


def test_check_draw_to_a_file_says_a_folder_is_wanted(capsys, tmp_path):
    # "--draw s.jsonl: cannot make the folder s.jsonl: File exists"
    trace = tmp_path / "s.jsonl"
    assert run(capsys, "sample", "--out", trace, "-q")[0] == 0
    code, _, err = run(capsys, "check", trace, "--draw", trace)
    assert code == 2 and one_line(err, "tomkit check: ") == (
        f"tomkit check: --draw {trace}: a file; --draw takes a folder")
