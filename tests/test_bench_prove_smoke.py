"""Smoke test of bench/prove_bench.py: a one-n run measures both encodings and prints
the facts encoding's time beside the classic one's, with the speedup."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "prove_bench.py"


def _load():
    spec = importlib.util.spec_from_file_location("prove_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["prove_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_one_n(capsys):
    mod = _load()
    assert mod.main(["--rules", "toto,gl-toto", "--min-n", "3", "--max-n", "3",
                     "--classic-max-n", "3"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()
            if not ln.startswith(("#", "rule"))]
    assert [r[:3] for r in rows] == [["toto", "3", "proved"], ["gl-toto", "3", "proved"]]
    for r in rows:
        facts, classic, speedup = float(r[3]), float(r[4]), float(r[5])
        # the times are printed to 0.1 s and the speedup from the unrounded times: it must
        # lie within what the rounded times allow (0.5 / 0.2 printed may be 3.2)
        lo = (classic - 0.05) / (facts + 0.05)
        hi = (classic + 0.05) / max(facts - 0.05, 1e-9)
        assert lo - 0.05 <= speedup <= hi + 0.05, (facts, classic, speedup)
