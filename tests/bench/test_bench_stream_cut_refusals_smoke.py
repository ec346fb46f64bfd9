"""bench/stream_cut_refusals_bench.py's parts run on a tiny trace, in this process: its
trace is made with p7 first seen late and a swap early, and its child decides it on the
cut that holds p7's first record ("cut") with the report of the same code without that
candidate ("refused": a cut that holds most of the run), with small windows so that the
broken trace spills and is cut, as the bench's long one is."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.narrow as narrow
import tomkit.checker.stream.reduced as reduced
import tomkit.checker.stream.spill as spill


@pytest.fixture
def bench(monkeypatch):
    path = Path(__file__).parent.parent.parent / "bench" / "stream_cut_refusals_bench.py"
    spec = importlib.util.spec_from_file_location("stream_cut_refusals_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(canon, "TRIM_AT", 16)
    monkeypatch.setattr(driver, "READ_ROWS", 256)
    monkeypatch.setattr(spill, "SPILL_ROWS", 128)
    # the child's "refused" and its count of the records read, put back after the test
    monkeypatch.setattr(narrow.Heads, "reached", narrow.Heads.reached)
    monkeypatch.setattr(reduced, "decide_chunk", reduced.decide_chunk)
    return mod


def test_stream_cut_refusals_bench_smoke(bench, capsys, tmp_path):
    path = tmp_path / "late.parquet"
    bench.make(path, 400, 1, 20, 60)
    figs = {}
    for mode in ("cut", "refused"):
        bench.child(mode, str(path))
        figs[mode] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figs["cut"]["modes"] == {"slow": 1, "narrowed": 1}, figs["cut"]
    assert figs["cut"]["verdicts"] == figs["refused"]["verdicts"]
    assert figs["cut"]["witness"] == figs["refused"]["witness"]
    assert 0 < 2 * figs["cut"]["read"] < figs["refused"]["read"], figs
    assert figs["cut"]["verdicts"]["agreement"] == "violated"
    assert "p7" in figs["cut"]["witness"]["agreement"]
