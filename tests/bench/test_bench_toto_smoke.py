"""Smoke test of bench/toto_tables.py: the quick run works and ToTo beats all-ack."""

from __future__ import annotations

import importlib.util
import sys

from locations import ROOT

BENCH = ROOT / "bench" / "toto_tables.py"


def _load():
    spec = importlib.util.spec_from_file_location("toto_tables", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["toto_tables"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_quick_main_returns_zero(capsys):
    mod = _load()
    assert mod.main(["--quick", "--messages", "200", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed 3" in out


def test_rows_toto_index_of_latency_below_all_ack():
    mod = _load()
    rows = mod.table_rows(messages=200, seed=1, loads=(50, 200), log=lambda s: None)
    assert len(rows) == 4
    for r in rows:
        assert r["iol_ack"] == 8.0
        assert 5.0 <= r["iol_toto"] < 8.0
        assert r["speedup"] > 1.0
        assert r["undelivered"] == 0
        for v in ("s-toto", "g-toto", "gl-toto"):
            assert 0.0 <= r[f"earlier_{v}"] <= 1.0
