"""SIGTERM (kill, timeout) ends a command as Ctrl-C does: every record written whole,
what became of the files said, exit 143 (128 + 15). In-process, the command's own
handler is installed as ``tomkit`` installs it (traces/interrupt.py) and a real SIGTERM
is raised inside the work; one run of the real command is killed from outside."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from cli_run import run
from signal_at_call import signal_at_call

import tomkit.cli.simulate as cli_simulate
import tomkit.model.dataset as dataset
import tomkit.traces.generate as generate
from tomkit.traces import jsonl
from tomkit.traces.reader import read_records

# every test here with SIGTERM taken as Ctrl-C (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("sigterm_as_ctrl_c")



def test_simulate_stopped_while_simulating_writes_nothing_and_says_so(
        capsys, monkeypatch, tmp_path):
    out = tmp_path / "run.jsonl"
    signal_at_call(monkeypatch, cli_simulate, "simulate")
    code, _, err = run(capsys, "simulate", "--n", "3", "--messages", "5", "--out", out)
    assert code == 143 and not out.exists()
    assert err.splitlines()[-2:] == [
        "tomkit simulate: terminated (SIGTERM)",
        f"tomkit simulate: nothing written to {out}: stopped while simulating, before the "
        "trace is written (seed 1)"]


def test_simulate_stopped_while_opening_its_file_removes_it(capsys, monkeypatch, tmp_path):
    # the first write is the header, in the writer's constructor (an empty file was
    # left, which the readers refuse)
    out = tmp_path / "run.jsonl"
    signal_at_call(monkeypatch, jsonl.JsonlSink, "_raw_write")
    code, _, err = run(capsys, "simulate", "--n", "3", "--messages", "5", "--out", out)
    assert code == 143 and not out.exists()
    assert err.splitlines()[-2:] == [
        "tomkit simulate: terminated (SIGTERM)",
        f"tomkit simulate: removed {out}: stopped before any record was written"]


def test_simulate_stopped_inside_its_write_keeps_whole_records(capsys, monkeypatch,
                                                               tmp_path):
    out = tmp_path / "run.jsonl"
    signal_at_call(monkeypatch, jsonl.JsonlSink, "_raw_write", at=2)
    code, _, err = run(capsys, "simulate", "--n", "3", "--messages", "5", "--out", out)
    kept = read_records(out)  # whole lines: the reader takes every one
    assert code == 143 and kept
    assert f"tomkit simulate: kept {len(kept):,} complete records in {out}" in err
    assert "Traceback" not in err


def test_sample_stopped_between_traces_keeps_the_traces_made(capsys, monkeypatch, tmp_path):
    out = tmp_path / "s.parquet"
    signal_at_call(monkeypatch, generate, "clean_trace", at=4)
    code, _, err = run(capsys, "sample", "--traces", "50", "-q", "--out", out)
    kept = read_records(out)
    assert code == 143 and {r["trace"] for r in kept} == {"t0", "t1", "t2"}
    assert "tomkit sample: terminated (SIGTERM)" in err
    assert "they are the first 3 of 50 traces, each whole (seed 1)" in err


def test_generate_stopped_leaves_no_half_data_set(capsys, monkeypatch, tmp_path):
    out = tmp_path / "gen"
    signal_at_call(monkeypatch, dataset, "_side_files")
    code, _, err = run(capsys, "generate", "--traces", "4", "--workers", "1", "-q",
                       "--out", out)
    assert code == 143 and not out.exists() and list(tmp_path.iterdir()) == []
    assert err.splitlines()[-2:] == [
        "tomkit generate: terminated (SIGTERM)",
        f"tomkit generate: {out} not made: a data set replaces it only once complete (the "
        "part made so far was removed)"]


def test_fuzz_stopped_says_what_was_written(capsys, monkeypatch, tmp_path):
    import tomkit.fuzz.stateful as stateful

    signal_at_call(monkeypatch, stateful, "fuzz")
    code, _, err = run(capsys, "fuzz", "toto", "--examples", "5", "--out", tmp_path / "f")
    assert code == 143 and not (tmp_path / "f").exists()
    assert err.splitlines()[-1] == (
        f"tomkit fuzz: nothing written to {tmp_path / 'f'}: stopped before the fuzzing ended "
        "(seed 1: the same command runs the same examples again)")


def test_the_real_command_killed_by_sigterm_mid_write(tmp_path):
    """tomkit sample, its batches made small so that it writes all the time, killed from
    outside once its file has records: exit 143, and the file is valid, every trace in
    it whole."""
    out = tmp_path / "s.jsonl"
    code = ("import sys, tomkit.cli.sample as s; s.BATCH = 300; "
            "from tomkit.cli import main; "
            f"sys.argv = ['tomkit', 'sample', '--traces', '1000000', '-q', '--out', {str(out)!r}]; "
            "sys.exit(main())")
    p = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a loaded machine starts Python slowly
        while time.monotonic() < deadline and p.poll() is None and \
                not (out.exists() and out.stat().st_size > 0):
            time.sleep(0.05)
        assert p.poll() is None, p.stderr.read()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err
    assert err.startswith("tomkit sample: terminated (SIGTERM)\n"), err
    kept = read_records(out)
    made = int(err.split("they are the first ")[1].split(" ")[0].replace(",", ""))
    by_trace: dict[str, int] = {}
    for r in kept:
        by_trace[r["trace"]] = by_trace.get(r["trace"], 0) + 1
    assert list(by_trace) == [f"t{i}" for i in range(made)]
    # each whole: as many records as the same trace made afresh (sample's defaults)
    for i in (0, made - 1):
        assert by_trace[f"t{i}"] == len(generate.clean_trace(f"t{i}", seed=1 + i,
                                                            n_processes=4, n_messages=12))


def test_scan_stopped_says_its_out_is_as_it_was(capsys, monkeypatch, tmp_path):
    import tomkit.checker.spark.job as job

    data = tmp_path / "data"
    data.mkdir()
    (data / "t.jsonl").write_text('{"trace": "t", "process": "p0", "kind": "send", '
                                  '"msg": "m"}\n')
    out = tmp_path / "verdicts"
    signal_at_call(monkeypatch, job, "run_args")
    code, _, err = run(capsys, "scan", data, "--out", out)
    assert code == 143 and not out.exists()
    assert err.splitlines()[-2:] == [
        "tomkit scan: terminated (SIGTERM)",
        f"tomkit scan: {out} not made: a scan replaces it only once complete"]


def test_watch_stopped_keeps_its_state(capsys, monkeypatch, tmp_path):
    import tomkit.cli.watch as cli_watch

    trace = tmp_path / "t.jsonl"
    trace.write_text('{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n')
    state = tmp_path / "state"

    class Clock:  # the poll's sleep, where a SIGTERM comes
        @staticmethod
        def sleep(seconds):
            signal.raise_signal(signal.SIGTERM)

        monotonic = staticmethod(time.monotonic)

    monkeypatch.setattr(cli_watch, "time", Clock)
    code, _, err = run(capsys, "watch", trace, "--state", state, "--idle-exit", "600")
    assert code == 143
    assert err.splitlines()[-1] == "tomkit watch: terminated (SIGTERM); state kept"
    assert any(state.iterdir())  # the checkpoint a restart resumes from


def test_generate_stopped_cancels_the_queued_tasks(capsys, monkeypatch, tmp_path):
    """SIGTERM after the first part file: the pool's queued tasks are cancelled, not run
    to the end of the data set before the stop is honoured (only the main process gets
    a kill's SIGTERM; Ctrl-C reaches the workers too)."""
    from concurrent.futures import ProcessPoolExecutor

    shutdowns: list[bool] = []

    class Pool(ProcessPoolExecutor):
        def map(self, fn, *iterables, **kwargs):
            for i, result in enumerate(super().map(fn, *iterables, **kwargs)):
                if i == 0:
                    signal.raise_signal(signal.SIGTERM)
                yield result

        def shutdown(self, wait=True, *, cancel_futures=False):
            shutdowns.append(cancel_futures)
            super().shutdown(wait=wait, cancel_futures=cancel_futures)

    monkeypatch.setattr(dataset, "ProcessPoolExecutor", Pool)
    out = tmp_path / "gen"
    # 12 traces over toto's configurations: several small tasks, one per part file
    code, _, err = run(capsys, "generate", "--traces", "12",
                       "--protocol", "toto", "--workers", "1", "-q", "--out", out)
    assert code == 143 and not out.exists() and list(tmp_path.iterdir()) == []
    assert shutdowns[0] is True and "tomkit generate: terminated (SIGTERM)" in err
