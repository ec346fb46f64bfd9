"""NATS JetStream recorded live (tomkit/record/nats/): a clean run, a killed stream
leader and a partitioned one, small and bounded, judged by the profile JetStream
documents; the store reader on a torn block."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest
from live_record import LIVE_TIMEOUT, check, live, records, verdicts

from tomkit.record.nats.store import read_stream


@pytest.mark.record
@pytest.mark.parametrize("run", ["clean", "kill-leader", "partition-leader"])
def test_nats_live(tmp_path, run):
    mod = live("nats")
    out = tmp_path / f"nats-{run}.jsonl.gz"
    mod.record(replace(mod.RUNS[run], messages=15), out, seed=3, timeout=LIVE_TIMEOUT,
               say=lambda s: None)
    code, report = check("--guarantee-file", str(mod.profile_file()), str(out))
    assert code == 0, report["traces"][0]["results"]
    code, report = check("-p", "agreement,validity,total-order-strong", str(out))
    assert code == 0, verdicts(report)
    recs = records(out)
    acked = {r["msg"] for r in recs if r["kind"] == "send"
             and r.get("x_put") in ("ok", "duplicate")}
    crashed = {r["process"] for r in recs if r["kind"] == "crash"}
    for p in {r["process"] for r in recs} - crashed:  # no acknowledged write lost
        assert acked <= {r["msg"] for r in recs if r["kind"] == "deliver"
                         and r["process"] == p}
    seqs = [r["x_seq"] for r in recs if r["kind"] == "deliver" and r["process"] == "n1"
            and "n1" not in crashed]
    assert seqs == sorted(seqs)
    if run == "clean":
        assert crashed == set() and len(acked) == 45
    elif run == "partition-leader":  # cut off and healed: every write acknowledged
        assert crashed == set() and len(acked) == 45
        notes = [f["fault"] for r in recs for f in r.get("x_fault", ())]
        assert notes == ["partition", "end partition"]
    else:
        (crash,) = [r for r in recs if r["kind"] == "crash"]
        assert crash["x_fault"][0]["fault"] == "kill"


def _record(seq: int, subject: bytes, payload: bytes, header: bytes = b"") -> bytes:
    body = subject + (struct.pack("<I", len(header)) + header if header else b"") + payload
    rl = 22 + len(body) + 8
    return struct.pack("<IQqH", rl | (1 << 31 if header else 0), seq, 0,
                       len(subject)) + body + b"\0" * 8


def test_store_reader_reads_records_and_reports_a_torn_one(tmp_path):
    msgs = tmp_path / "msgs"
    msgs.mkdir()
    whole = _record(1, b"tomkit.n1", b"n1.0", b"NATS/1.0\r\nNats-Msg-Id: n1.0\r\n\r\n") \
        + _record(2, b"tomkit.n2", b"n2.0")
    torn = _record(3, b"tomkit.n3", b"n3.0")[:-5]
    (msgs / "1.blk").write_bytes(whole)
    (msgs / "2.blk").write_bytes(_record(3, b"tomkit.n3", b"n3.0") + torn)
    got, problems = read_stream(tmp_path)
    assert [(m.seq, m.subject, m.payload) for m in got] == [
        (1, "tomkit.n1", b"n1.0"), (2, "tomkit.n2", b"n2.0"), (3, "tomkit.n3", b"n3.0")]
    (problem,) = problems
    assert "2.blk" in problem and "offset 43" in problem and "38 bytes left" in problem
