"""Smoke test of bench/prove_bench.py: a one-n run measures both encodings and prints
the facts encoding's time beside the classic one's, with the speedup, and for GL-ToTo
the split-only baseline beside the reduced proof, with the gain."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from locations import ROOT

BENCH = ROOT / "bench" / "prove_bench.py"


def _load():
    spec = importlib.util.spec_from_file_location("prove_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["prove_bench"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_one_n(capsys):
    mod = _load()
    assert mod.main(["--rules", "toto,gl-toto", "--min-n", "3", "--max-n", "3",
                     "--classic-max-n", "3", "--split-max-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out.splitlines()[0]
    rows = [ln.split() for ln in out.splitlines() if not ln.startswith(("#", "rule"))]
    assert [r[:3] for r in rows] == [["toto", "3", "proved"], ["gl-toto", "3", "proved"]]
    for r in rows:
        facts, classic, speedup = float(r[3]), float(r[4]), float(r[5])
        _within_rounding(facts, classic, speedup)
        assert r[10] == "-"  # nothing recorded at n = 3
        # the facts run's CPU seconds: what the loaded shared cores cannot inflate
        assert 0.0 <= float(r[11]) <= float(r[3]) * 2 + 0.1
    toto, gl = rows
    assert toto[6:8] == ["-", "-"]  # the split baseline is for rules that read the rank
    _within_rounding(float(gl[3]), float(gl[6]), float(gl[7]))


def _within_rounding(new: float, old: float, ratio: float) -> None:
    # the times are printed to 0.1 s and the ratio from the unrounded times: it must
    # lie within what the rounded times allow (0.5 / 0.2 printed may be 3.2)
    lo = (old - 0.05) / (new + 0.05)
    hi = (old + 0.05) / max(new - 0.05, 1e-9)
    assert lo - 0.05 <= ratio <= hi + 0.05, (new, old, ratio)


def test_per_delta(capsys, tmp_path):
    mod = _load()
    out_file = tmp_path / "runs.jsonl"
    assert mod.main(["--per-delta", "--rules", "all-ack,gl-toto", "--min-n", "3",
                     "--max-n", "3", "--jsonl", str(out_file)]) == 0
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if not ln.startswith(("#", "rule"))]
    # one line per (rule, delta): all-ack has none, GL-ToTo deltas 1 and 2 at n = 3
    assert [r[:4] for r in rows] == [["all-ack", "3", "-", "proved"],
                                     ["gl-toto", "3", "1", "proved"],
                                     ["gl-toto", "3", "2", "proved"]]
    recs = [json.loads(ln) for ln in out_file.read_text().splitlines()]
    assert [(r["rule"], r["delta"]) for r in recs] == [("all-ack", None), ("gl-toto", 1),
                                                       ("gl-toto", 2)]
    for r, row in zip(recs, rows):
        assert r["cpu"] >= 0 and r["wall"] > 0
        assert float(row[4]) == pytest.approx(r["cpu"], abs=0.06)
        assert r["queries"]["agreement"][0] == "proved"
        assert r["queries"]["stability"][0] == "implied"  # agreement covers it


def test_cpu_limit_and_table(capsys, tmp_path):
    mod = _load()
    out_file = tmp_path / "runs.jsonl"
    # all-ack at n = 3 fits in 60 CPU seconds; GL-ToTo at n = 8, delta = 3 needs more
    # than 10 s of CPU on any machine (its agreement query alone: docs/prove.md)
    assert mod.main(["--per-delta", "--rules", "all-ack", "--min-n", "3", "--max-n", "3",
                     "--cpu-limit", "60", "--jsonl", str(out_file)]) == 0
    assert mod.main(["--per-delta", "--rules", "gl-toto", "--min-n", "8", "--max-n", "8",
                     "--deltas=3", "--cpu-limit", "1", "--jsonl", str(out_file)]) == 0
    recs = [json.loads(ln) for ln in out_file.read_text().splitlines()]
    assert [(r["rule"], r["delta"], r["status"]) for r in recs] == [
        ("all-ack", None, "proved"), ("gl-toto", 3, "over 1 cpu s")]
    capsys.readouterr()
    assert mod.main(["--table", str(out_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| rule | n | delta | verdict | CPU s")
    assert lines[2].startswith("| all-ack | 3 | - | proved |")
    assert lines[3].startswith("| gl-toto | 8 | 3 | over 1 cpu s | 1.0 |")
