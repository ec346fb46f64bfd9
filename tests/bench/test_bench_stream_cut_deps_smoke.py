"""bench/stream_cut_deps_bench.py's parts run on a tiny trace, in this process: its trace
is made with deps (a swap early), and its child decides it across the cut ("now") with
the report of the code before (the cut refused for causal order and latency: every held
record checked), with small windows so that the broken trace spills and is cut, as the
bench's long one is."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.narrow as narrow
import tomkit.checker.stream.spill as spill


@pytest.fixture
def bench(monkeypatch):
    path = Path(__file__).parent.parent.parent / "bench" / "stream_cut_deps_bench.py"
    spec = importlib.util.spec_from_file_location("stream_cut_deps_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(canon, "TRIM_AT", 16)
    monkeypatch.setattr(driver, "READ_ROWS", 256)
    monkeypatch.setattr(spill, "SPILL_ROWS", 128)
    monkeypatch.setattr(narrow, "NARROWED", narrow.NARROWED)  # the child's "before"
    return mod


def test_stream_cut_deps_bench_smoke(bench, capsys, tmp_path):
    path = tmp_path / "deps.parquet"
    bench.make(path, 400, 1, 40, False)
    figs = {}
    for mode in ("now", "before"):
        bench.child(mode, str(path), False)
        figs[mode] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figs["now"]["modes"] == {"slow": 1, "narrowed": 1}, figs["now"]
    assert figs["before"]["modes"] == {"slow": 1}, figs["before"]
    assert figs["now"]["verdicts"] == figs["before"]["verdicts"]
    assert figs["now"]["witness"] == figs["before"]["witness"]
    assert figs["now"]["verdicts"]["causal-order"] == "violated"
    assert "m41 depends on m40" in figs["now"]["witness"]["causal-order"]
