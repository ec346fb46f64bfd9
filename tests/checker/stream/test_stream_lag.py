"""A process that lags behind the retired prefix (checker/stream/retired.py): in a file
grouped by process, the later processes deliver what the first one retired long ago;
they read the retired sequence back from disk and the trace stays in the single pass,
in memory bounded by the window, with the whole-trace checker's verdicts."""

from __future__ import annotations

import pytest
from stream_oracle import STREAMED, agree

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run
from tomkit.checker.stream.retired import RetiredSequence
from tomkit.traces.writer import write_records

LATENCY = Options(latency_bound=50.0)






def grouped(n: int, procs: int = 4, swap: tuple[str, int] | None = None,
            stop: dict[str, int] | None = None, slow: tuple[str, int] | None = None,
            resend: int | None = None) -> list[dict]:
    """p0 sends m0..m(n-1), delivering each as it sends it; the others deliver them all
    after it, one process after the other (grouped by process). ``swap``: that process
    delivers positions k and k+1 the other way round; ``stop``: a process delivers only
    a prefix; ``slow``: that process delivers position k 100 s late; ``resend``: the last
    process sends that message again."""
    recs = []
    for i in range(n):
        recs.append({"trace": "t", "process": "p0", "kind": "send", "msg": f"m{i}",
                     "time": float(i)})
        recs.append({"trace": "t", "process": "p0", "kind": "deliver", "msg": f"m{i}",
                     "time": i + 1.0})
    if swap and swap[0] == "p0":  # p0 breaks the picture before the others come
        k = swap[1]
        a, b = recs[2 * k + 1], recs[2 * k + 3]
        a["msg"], b["msg"] = b["msg"], a["msg"]
    for j in range(1, procs):
        p = f"p{j}"
        order = [f"m{i}" for i in range((stop or {}).get(p, n))]
        if swap and swap[0] == p:
            k = swap[1]
            order[k], order[k + 1] = order[k + 1], order[k]
        for i, m in enumerate(order):
            late = 100.0 if slow and slow == (p, i) else 0.0
            recs.append({"trace": "t", "process": p, "kind": "deliver", "msg": m,
                         "time": i + 2.0 + late})
        if resend is not None and j == procs - 1:
            recs.append({"trace": "t", "process": p, "kind": "send", "msg": f"m{resend}",
                         "time": n + 5.0})
    return recs


@pytest.fixture
def window(monkeypatch):
    monkeypatch.setattr(canon, "TRIM_AT", 64)
    # read 500 records at a time: the positions retire before the later processes come,
    # and the held records include a batch
    monkeypatch.setattr(driver, "READ_ROWS", 500)


def test_a_long_grouped_trace_stays_in_the_window(window, tmp_path):
    path = tmp_path / "g.jsonl"
    write_records(path, grouped(20_000))
    run = _Run(STREAMED, LATENCY, False)
    agree([path], STREAMED, LATENCY, run)
    assert run.modes == {"fast": 1}
    # 80,000 records and 20,000 positions: the held records and the window's entries
    # stay within a few windows, the lag (20,000 positions) is read from disk
    assert run.peak_held < 2_000
    assert run.peak_window < 1_000


@pytest.mark.parametrize("case", [
    {"swap": ("p0", 1_500)}, {"swap": ("p2", 3)}, {"swap": ("p3", 1_990)}, {"swap": ("p1", 100)},
    {"stop": {"p2": 500}}, {"stop": {"p3": 0}}, {"slow": ("p2", 50)},
    {"slow": ("p3", 1_990)}, {"resend": 10}, {"resend": 1_990},
])
def test_a_lagging_process_agrees_with_the_whole_trace(window, tmp_path, case):
    path = tmp_path / "f.jsonl"
    write_records(path, grouped(2_000, **case))
    for options in (Options(), LATENCY):
        run = _Run(STREAMED, options, False)
        agree([path], STREAMED, options, run)
        broken = "swap" in case or "resend" in case
        if not broken and options is Options():
            # a clean picture: the lag is read from disk, not sent to the whole engine
            # (agreement's violation with "stop" is left whole by its decider)
            assert run.modes == {"fast": 1}
        if broken:
            assert run.modes == {"whole": 1}  # the retired records are needed


def test_the_retired_sequence_reads_back_what_was_written(tmp_path):
    import numpy as np

    seq = RetiredSequence(["time"], str(tmp_path))
    h = np.arange(10, dtype=np.uint64)
    seq.append(h, h + 100, {"time": h.astype(float)})
    seq.append(h + 10, h + 110, {"time": h + 10.0})
    rows = seq.at(np.array([0, 5, 19, 12]))
    assert rows["h1"].tolist() == [0, 5, 19, 12]
    assert rows["h2"].tolist() == [100, 105, 119, 112]
    assert rows["t_time"].tolist() == [0.0, 5.0, 19.0, 12.0]
    seq.close()
    assert not list(tmp_path.iterdir())


def test_a_restart_cuts_the_retired_sequence_back_to_its_checkpoint(tmp_path):
    import pickle

    import numpy as np

    seq = RetiredSequence([], str(tmp_path))
    h = np.arange(10, dtype=np.uint64)
    seq.append(h, h, {})
    saved = pickle.dumps(seq)  # tomkit watch's checkpoint
    seq.append(h + 10, h + 10, {})  # retired after it: retired again after the restart
    back = pickle.loads(saved)
    assert back.rows == 10
    assert (tmp_path / back.path.split("/")[-1]).stat().st_size == 10 * 16
    back.append(h + 20, h + 20, {})
    assert back.at(np.array([9, 10, 19]))["h1"].tolist() == [9, 20, 29]
    back.close()
