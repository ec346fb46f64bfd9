"""The held records of a broken trace spill to disk (checker/stream/spill.py): the same
report as the whole-trace checker on traces broken early, with a buffer of a few
records, in both layouts; the buffer stays bounded while the trace is read; the file is
removed once the trace is decided; and ``tomkit watch`` restarted on its checkpoint cuts
the file back, so no record is held twice."""

from __future__ import annotations

import io
import json

import pytest
from budget import SEEDS
from stream_oracle import outcomes

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.narrow as narrow
import tomkit.checker.stream.spill as spill
from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.checker.stream.watch import Watch
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.long_trace import long_trace_tables
from tomkit.traces.writer import TraceWriter, write_records

STREAMED = [p for p in properties().values() if p.stream]




@pytest.fixture
def tiny(monkeypatch, tmp_path):
    """A window of 4 positions, 8 records read at a time, a buffer of 6 records; the
    spill files go to their own directory, which the test then looks into."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)
    d = tmp_path / "spill"
    d.mkdir()
    written = []
    write = spill.Spill.write

    def counted(self, pieces):
        written.append(sum(p.table.num_rows for p in pieces))
        return write(self, pieces)

    monkeypatch.setattr(spill.Spill, "write", counted)
    monkeypatch.setattr(spill.tempfile, "tempdir", str(d))
    return d, written


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_planted_fault_with_its_held_records_spilled(fault, tiny, tmp_path):
    d, written = tiny
    for seed in SEEDS:
        recs, _ = faulty_trace(f"t-{fault}-{seed}", fault, seed=seed, n_messages=30)
        for layout, rs in (("interleaved", recs),
                           ("grouped", sorted(recs, key=lambda r: r["process"]))):
            path = tmp_path / f"{seed}-{layout}.jsonl"
            write_records(path, rs)
            assert outcomes(check_stream([path], STREAMED)) == \
                outcomes(check_paths([path], STREAMED))
            assert not list(d.iterdir())  # each spill file removed once decided


def long_file(path, n: int, swap_at: int) -> None:
    with TraceWriter(path) as w:
        for t in long_trace_tables(n, n_processes=4, seed=3, block=200, swap_at=swap_at):
            w.write_table(t)


# with the cut (which serves every streamed property) and without it (the spill's own
# path, the held records read back for the exact checks)
@pytest.mark.parametrize("cut", [True, False])
def test_a_trace_broken_early_keeps_a_bounded_buffer(tiny, monkeypatch, tmp_path, cut):
    d, written = tiny
    monkeypatch.setattr(spill, "SPILL_ROWS", 300)
    monkeypatch.setattr(driver, "READ_ROWS", 100)
    path = tmp_path / "early.parquet"
    long_file(path, 2000, swap_at=20)  # 10,000 records, broken near the start
    peak = []
    feed = canon.TraceState.feed

    def watched(self, piece):
        feed(self, piece)
        peak.append(sum(p.table.num_rows for p, _ in self.buffer))

    monkeypatch.setattr(canon.TraceState, "feed", watched)
    if not cut:
        for module in (driver, narrow):
            monkeypatch.setattr(module, "narrows", lambda props: False)
    run = _Run(STREAMED, Options(), False)
    report = check_stream([path], STREAMED, run=run)
    assert outcomes(report) == outcomes(check_paths([path], STREAMED))
    assert run.modes == ({"slow": 1, "narrowed": 1} if cut else {"slow": 1})
    assert report.exit_code() == 1
    assert sum(written) > 9_000  # nearly the whole trace went to the file ...
    assert max(peak) < 300 + 100  # ... through a buffer of 300 records and one batch
    assert not list(d.iterdir())


def test_watch_restarted_on_its_checkpoint_holds_no_record_twice(tiny, tmp_path):
    d, written = tiny
    recs, _ = faulty_trace("tw", "duplicate-delivery", seed=3, n_messages=40)
    lines = [json.dumps(r) + "\n" for r in recs]
    path = tmp_path / "w.jsonl"
    state = tmp_path / "state"
    props = [properties()[n] for n in ("integrity", "total-order-weak", "fifo-order")]
    third = len(lines) // 3
    path.write_text("".join(lines[:third]))
    w = Watch([str(path)], props, Options(), fmt="json", out=io.StringIO(),
              state_dir=str(state))
    w.cycle()
    w.checkpoint()
    with open(path, "a") as f:
        f.write("".join(lines[third:2 * third]))
    w.cycle()  # more spilled after the checkpoint: then killed (no checkpoint)
    assert written
    w2 = Watch([str(path)], props, Options(), fmt="json", out=io.StringIO(),
               state_dir=str(state))
    with open(path, "a") as f:
        f.write("".join(lines[2 * third:]))
    w2.cycle()
    report = w2.finish()
    assert outcomes(report) == outcomes(check_paths([path], props))
    assert report.outcomes[0].events == len(recs)
