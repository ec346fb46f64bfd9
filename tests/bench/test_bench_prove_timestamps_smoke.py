"""Smoke test of bench/prove_timestamps_bench.py: a one-n run prints the baseline row,
a proved row and a refuted row with its run's length."""

from __future__ import annotations

import importlib.util
import sys

from locations import ROOT

BENCH = ROOT / "bench" / "prove_timestamps_bench.py"


def _load():
    spec = importlib.util.spec_from_file_location("prove_timestamps_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["prove_timestamps_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_one_n(capsys):
    mod = _load()
    assert mod.main(["--max-n", "2", "--protocols", "abcast",
                     "--variants", "deliver-ud"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()
            if not ln.startswith(("#", "protocol"))]
    assert [r[:3] for r in rows] == [["abcast", "2", "proved"],
                                     ["abcast[deliver-ud]", "2", "counterexample"]]
    assert rows[0][12] == "1.00" and "5 steps" in " ".join(rows[1])
