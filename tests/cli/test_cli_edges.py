"""Rough edges of issue 30 part 7, round 7, on the command line: Ctrl-C while a command
writes a file leaves a file the readers take (complete records, the count said on
stderr) or says plainly that nothing was written; never a truncated file, never a
silent deletion."""

from __future__ import annotations

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
