"""Ctrl-C while a trace file is written (traces/interrupt.py, traces/writer.py): the
write under way finishes, then KeyboardInterrupt; the writer closes the file as a valid
one with every record written whole and says so in a note, or removes a file with no
record. Each case delivers a real SIGINT in the middle of a write."""

from __future__ import annotations

import signal

import pytest
from signal_at_call import signal_at_call

from tomkit.traces import jsonl, parquet
from tomkit.traces.reader import read_records
from tomkit.traces.writer import TraceWriter

RECORDS = [{"trace": f"t{i // 4}", "process": f"p{i % 2}", "kind": "send", "msg": f"m{i}"}
           for i in range(400)]


@pytest.fixture(autouse=True)
def python_handles_ctrl_c():
    # a test runner's worker may have its own SIGINT handler, or none; the command has
    # Python's
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)



@pytest.mark.parametrize("suffix, owner, name", [
    (".jsonl", jsonl.JsonlSink, "_raw_write"),
    (".jsonl.gz", jsonl.JsonlSink, "_raw_write"),
    (".parquet", parquet.ParquetSink, "write_table"),
])
def test_a_sigint_inside_a_write_waits_for_it_and_the_file_keeps_every_record(
        tmp_path, monkeypatch, suffix, owner, name):
    path = tmp_path / f"t{suffix}"
    with pytest.raises(KeyboardInterrupt) as ei:
        with TraceWriter(path) as w:
            calls = signal_at_call(monkeypatch, owner, name, signal.SIGINT)
            w.write_many(RECORDS[:200])
            w.write_many(RECORDS[200:])  # not reached: the interrupt came after the first
    assert calls
    kept = read_records(path)
    assert [r["msg"] for r in kept] == [r["msg"] for r in RECORDS[:200]]
    assert ei.value.__notes__ == [f"kept 200 complete records in {path}, a valid file "
                                  "that ends where the run was stopped"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_records_written_one_by_one_are_kept_whole(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    with pytest.raises(KeyboardInterrupt):
        with TraceWriter(path) as w:
            for i, r in enumerate(RECORDS):
                if i == 123:
                    raise KeyboardInterrupt
                w.write(r)
    assert len(read_records(path)) == 123


def test_a_file_with_no_record_is_removed_and_said_so(tmp_path):
    path = tmp_path / "t.jsonl"
    with pytest.raises(KeyboardInterrupt) as ei:
        with TraceWriter(path):
            raise KeyboardInterrupt
    assert not path.exists()
    assert ei.value.__notes__ == [f"removed {path}: stopped before any record was written"]


def test_another_error_still_removes_the_partly_written_file(tmp_path):
    path = tmp_path / "t.jsonl"
    with pytest.raises(RuntimeError):
        with TraceWriter(path) as w:
            w.write_many(RECORDS)
            raise RuntimeError("boom")
    assert not path.exists()
