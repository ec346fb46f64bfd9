"""``python -m tomkit.record`` stopped before a run ends (Ctrl-C, SIGTERM, a recorder's
error or timeout): the records logged so far are written, whole, to
``SYSTEM-RUN-sSEED.cut.jsonl.gz``, the last one saying why in ``x_cut_short``; or it is
said plainly that nothing was written, and why. A stand-in system, so that no real one
needs to run: it logs events as a recorder does, then is stopped (a real SIGTERM)."""

from __future__ import annotations

import signal

import pytest

import tomkit.record.__main__ as record_main
from tomkit.record.log import EventLog
from tomkit.record.system import System
from tomkit.traces.interrupt import terminate_as_interrupt
from tomkit.traces.reader import read_records


def stand_in(events: int, stop) -> System:
    """A system whose run logs ``events`` sends, then ``stop()`` (the recorder's own
    ``finally`` freezes the log, as every recorder's does)."""

    def record(run, path, *, seed, timeout):
        log = EventLog(f"etcd-clean-s{seed}")
        try:
            for i in range(events):
                log.add(f"p{i % 2}", "send", msg=f"m{i}")
            stop()
        finally:
            log.freeze()
        log.write(path)
        return log

    return System("etcd", {"clean": object()}, (), record, lambda: None, profile="etcd")


@pytest.fixture
def sigterm_as_ctrl_c():
    old_term = signal.getsignal(signal.SIGTERM)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    terminate_as_interrupt()
    yield
    signal.signal(signal.SIGTERM, old_term)
    signal.signal(signal.SIGINT, old_int)


def main(monkeypatch, system: System, tmp_path, *more: str) -> int:
    monkeypatch.setattr(record_main, "recorder", lambda name: system)
    return record_main.main(["etcd", "--out", str(tmp_path), *more])


def test_sigterm_writes_the_records_so_far_marked_cut_short(
        monkeypatch, tmp_path, capsys, sigterm_as_ctrl_c):
    code = main(monkeypatch, stand_in(7, lambda: signal.raise_signal(signal.SIGTERM)),
                tmp_path)
    err = capsys.readouterr().err
    cut = tmp_path / "etcd-clean-s1.cut.jsonl.gz"
    assert code == 143 and not (tmp_path / "etcd-clean-s1.jsonl.gz").exists()
    recs = read_records(cut)
    assert [r["msg"] for r in recs] == [f"m{i}" for i in range(7)]
    assert "x_cut_short" not in recs[0]
    assert recs[-1]["x_cut_short"].startswith("the run was stopped after ")
    assert recs[-1]["x_cut_short"].endswith(" s (SIGTERM)")
    lines = err.splitlines()
    assert lines[0] == "python -m tomkit.record: terminated (SIGTERM)"
    assert lines[1].startswith(f"python -m tomkit.record: wrote the 7 records recorded so "
                               f"far, each whole, to {cut}: the run was stopped after ")
    assert "Traceback" not in err


def test_ctrl_c_with_nothing_logged_says_nothing_was_written(monkeypatch, tmp_path, capsys):
    def ctrl_c():
        raise KeyboardInterrupt

    code = main(monkeypatch, stand_in(0, ctrl_c), tmp_path)
    err = capsys.readouterr().err
    assert code == 130 and list(tmp_path.iterdir()) == []
    assert err.splitlines()[-1].startswith(
        "python -m tomkit.record: nothing written: the run was stopped after ")
    assert err.splitlines()[-1].endswith(" s (Ctrl-C), before any event was logged")


def test_a_recorder_that_fails_is_said_and_its_records_kept(monkeypatch, tmp_path, capsys):
    def times_out():
        raise RuntimeError("etcd: the cluster did not elect a leader within 60 s")

    code = main(monkeypatch, stand_in(3, times_out), tmp_path)
    out = capsys.readouterr()
    assert code == 2
    assert "etcd clean: failed: etcd: the cluster did not elect a leader within 60 s" \
        in out.err
    recs = read_records(tmp_path / "etcd-clean-s1.cut.jsonl.gz")
    assert len(recs) == 3 and recs[-1]["x_cut_short"].endswith("(RuntimeError)")
    assert "check:" not in out.out  # a cut run is not judged as if it had ended


@pytest.mark.parametrize("flag, value", [("--timeout", "0"), ("--timeout", "nan"),
                                         ("--period", "-1"), ("--long", "inf"),
                                         ("--seed", "-1")])
def test_numbers_that_cannot_be_a_run_are_refused(monkeypatch, tmp_path, capsys, flag,
                                                  value):
    with pytest.raises(SystemExit) as e:
        main(monkeypatch, stand_in(1, lambda: None), tmp_path, flag, value)
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"{flag} must be" in err and list(tmp_path.iterdir()) == []


def test_stopped_while_the_system_boots_says_nothing_was_written(monkeypatch, tmp_path,
                                                                 capsys):
    from contextlib import contextmanager
    from dataclasses import replace

    @contextmanager
    def boot():
        raise KeyboardInterrupt
        yield

    system = replace(stand_in(1, lambda: None), boot=boot)
    code = main(monkeypatch, system, tmp_path)
    assert code == 130 and list(tmp_path.iterdir()) == []
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m tomkit.record: nothing written: stopped while etcd booted, before a "
        "run began")
