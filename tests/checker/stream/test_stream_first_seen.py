"""A process first seen in a reader's batch (checker/stream/driver.py: ``first_seen_cut``):
it is fed from its first record on, so the positions the processes seen before it
passed retire at their trim and it reads them back from disk, instead of holding the
low watermark from its batch's start (a file grouped by process whose first process's
records end inside a batch held all of them). Bounded positions and records held, the
whole-trace checker's report (stream_oracle.py), with and without views, clean and
with faults in the part the newcomer reads from disk and after it."""

from __future__ import annotations

import pytest
from stream_oracle import STREAMED, agree, by_process
from test_stream_view_lag import view_run

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.check_run import plan
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run
from tomkit.traces.writer import write_records

DEFAULT = plan(Options()).properties


def one_sender(n: int, procs: int = 4, swap: tuple[str, int] | None = None) -> list[dict]:
    """p0 sends m0..m(n-1) and delivers each; then each other process delivers them all
    (grouped by process); ``swap``: that process delivers positions k and k+1 the other
    way round."""
    recs = []
    for i in range(n):
        recs += [{"trace": "t", "process": "p0", "kind": k, "msg": f"m{i}"}
                 for k in ("send", "deliver")]
    for j in range(1, procs):
        order = [f"m{i}" for i in range(n)]
        if swap and swap[0] == f"p{j}":
            k = swap[1]
            order[k], order[k + 1] = order[k + 1], order[k]
        recs += [{"trace": "t", "process": f"p{j}", "kind": "deliver", "msg": m}
                 for m in order]
    return recs


def every_sender(n: int, procs: int = 4) -> list[dict]:
    """Every process sends in turn and all deliver in send order; grouped by process."""
    recs = []
    for i in range(n):
        recs.append({"trace": "t", "process": f"p{i % procs}", "kind": "send",
                     "msg": f"m{i}"})
        recs += [{"trace": "t", "process": f"p{j}", "kind": "deliver", "msg": f"m{i}"}
                 for j in range(procs)]
    return by_process(recs)


@pytest.fixture
def one_batch(monkeypatch):
    """A window of 16 positions, every file read in one batch: each later process is
    first seen inside the batch that holds the first process's records."""
    monkeypatch.setattr(canon, "TRIM_AT", 16)
    monkeypatch.setattr(driver, "READ_ROWS", 1 << 20)


def first_batch_ends_in_p1(monkeypatch, recs: list[dict]) -> None:
    """Read so that the first batch holds p0's records and the first 300 of p1's."""
    monkeypatch.setattr(driver, "READ_ROWS", 300 + sum(r["process"] == "p0" for r in recs))


def checked(path, props=STREAMED, options=Options()) -> _Run:
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


@pytest.mark.parametrize("make", [one_sender, every_sender])
def test_a_newcomer_inside_a_batch_does_not_hold_the_window(make, one_batch, tmp_path,
                                                            monkeypatch):
    path = tmp_path / "t.jsonl"
    recs = make(600)
    write_records(path, recs)
    first_batch_ends_in_p1(monkeypatch, recs)
    run = checked(path)
    assert run.modes == {"fast": 1}
    # 600 positions: the first process's part retires before the second one comes
    assert run.peak_window < 6 * 16, run.peak_window
    # as before: the second process, seen at the batch's start, held the positions the
    # first one passed beyond its 300 records of the batch
    monkeypatch.setattr(driver, "FIRST_SEEN", False)
    before = checked(path)
    assert before.modes == {"fast": 1} and before.peak_window >= 250, before.peak_window


def test_with_views_grouped_in_one_batch(one_batch, tmp_path, monkeypatch):
    path = tmp_path / "t.jsonl"
    recs = by_process([r for _, r in view_run(n_views=8, per_view=40)])
    write_records(path, recs)
    first_batch_ends_in_p1(monkeypatch, recs)
    run = checked(path, DEFAULT)
    assert run.modes == {"fast": 1}
    monkeypatch.setattr(driver, "FIRST_SEEN", False)
    before = checked(path, DEFAULT)
    assert before.modes == {"fast": 1}
    assert run.peak_window < before.peak_window // 2, (run.peak_window, before.peak_window)
    assert run.peak_held < before.peak_held, (run.peak_held, before.peak_held)


@pytest.mark.parametrize("swap", [("p1", 5), ("p2", 300), ("p3", 598)])
def test_faults_after_a_newcomer_read_from_disk(swap, one_batch, tmp_path, monkeypatch):
    """A swap in the part a newcomer reads back from disk, and near its end: the reports
    stay the whole-trace checker's (what the single pass cannot stand for goes whole)."""
    path = tmp_path / "t.jsonl"
    recs = one_sender(600, swap=swap)
    write_records(path, recs)
    first_batch_ends_in_p1(monkeypatch, recs)
    checked(path)


@pytest.mark.parametrize("rows", [7, 64, 1 << 20])
def test_interleaved_runs_are_cut_nowhere_needlessly(rows, one_batch, tmp_path,
                                                     monkeypatch):
    """Interleaved, every process is seen within its first rows: nothing is cut (the
    rows before a newcomer cannot outgrow the window), and the report is the oracle's."""
    monkeypatch.setattr(driver, "READ_ROWS", rows)
    recs = every_sender(200)
    recs.sort(key=lambda r: int(r["msg"][1:]))  # stable: each message's records in order
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    cuts = []
    real = driver.first_seen_cut
    monkeypatch.setattr(driver, "first_seen_cut",
                        lambda st, piece: cuts.append(real(st, piece)) or cuts[-1])
    run = checked(path)
    assert run.modes == {"fast": 1} and not any(cuts)


@pytest.mark.parametrize("read", [64, 1 << 20])
def test_when_no_process_holds_the_window_the_sends_are_still_awaited(read, one_batch,
                                                                    tmp_path, monkeypatch):
    """p0's records end with its crash, before the others' come (grouped, every process
    sending): while no seen process holds the low watermark, the positions past the FIFO
    pointer retire as when one does (canon.py's ``_trim``: S's end, not the pointer);
    the rest read back from disk, and the whole-trace checker's report."""
    monkeypatch.setattr(driver, "READ_ROWS", read)
    recs = every_sender(600)
    last = max(i for i, r in enumerate(recs) if r["process"] == "p0")
    recs.insert(last + 1, {"trace": "t", "process": "p0", "kind": "crash"})
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = checked(path)
    assert run.modes == {"fast": 1}
    assert run.peak_window < 6 * 16, run.peak_window
