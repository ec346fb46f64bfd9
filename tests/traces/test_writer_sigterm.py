"""SIGTERM while a trace file is written, in a process that takes it as Ctrl-C
(traces/interrupt.py's terminate_as_interrupt, as tomkit's commands do): the write under
way finishes, then Terminated (a KeyboardInterrupt); the file keeps every record written,
whole. Each case delivers a real SIGTERM in the middle of a write."""

from __future__ import annotations

import os
import signal

import pytest
from signal_at_call import signal_at_call

from tomkit.traces import jsonl, parquet
from tomkit.traces.interrupt import (
    Terminated,
    exit_code,
    stopped,
    uninterrupted,
)
from tomkit.traces.reader import read_records
from tomkit.traces.writer import TraceWriter

RECORDS = [{"trace": f"t{i // 4}", "process": f"p{i % 2}", "kind": "send", "msg": f"m{i}"}
           for i in range(400)]



@pytest.mark.parametrize("suffix, owner, name", [
    (".jsonl", jsonl.JsonlSink, "_raw_write"),
    (".jsonl.gz", jsonl.JsonlSink, "_raw_write"),
    (".parquet", parquet.ParquetSink, "write_table"),
])
def test_a_sigterm_inside_a_write_waits_for_it_and_the_file_keeps_every_record(
        tmp_path, monkeypatch, sigterm_as_ctrl_c, suffix, owner, name):
    path = tmp_path / f"t{suffix}"
    with pytest.raises(Terminated) as ei:
        with TraceWriter(path) as w:
            calls = signal_at_call(monkeypatch, owner, name)
            w.write_many(RECORDS[:200])
            w.write_many(RECORDS[200:])  # not reached: the signal came in the first
    assert calls
    assert [r["msg"] for r in read_records(path)] == [r["msg"] for r in RECORDS[:200]]
    assert ei.value.__notes__ == [f"kept 200 complete records in {path}, a valid file "
                                  "that ends where the run was stopped"]
    assert exit_code(ei.value) == 143 and stopped(ei.value) == "terminated (SIGTERM)"


def test_ctrl_c_and_sigterm_keep_their_own_names_and_codes(sigterm_as_ctrl_c):
    for sig, kind, code in ((signal.SIGINT, KeyboardInterrupt, 130),
                            (signal.SIGTERM, Terminated, 143)):
        with pytest.raises(KeyboardInterrupt) as ei:
            with uninterrupted():
                signal.raise_signal(sig)
                done = True  # the block ran to its end before the signal was raised
        assert done and type(ei.value) is kind and exit_code(ei.value) == code


def test_without_the_command_sigterm_is_not_deferred(tmp_path):
    """A program that did not ask (a library user) keeps SIGTERM's own handling: the
    block does not touch it."""
    old = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with uninterrupted():
            signal.raise_signal(signal.SIGTERM)  # ignored, as the program said
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, old)


def test_a_forked_worker_dies_of_sigterm_as_without_the_handler(sigterm_as_ctrl_c):
    """A pool's worker forked from the command (tomkit generate) ends on SIGTERM, as a
    process without the handler: its parent keeps the files."""
    pid = os.fork()
    if pid == 0:  # the child: the handler it inherited re-raises SIGTERM unhandled
        try:
            signal.raise_signal(signal.SIGTERM)
        finally:
            os._exit(7)  # reached only if SIGTERM did not end the process
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
