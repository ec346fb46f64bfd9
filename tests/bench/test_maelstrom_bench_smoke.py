"""Smoke test of bench/maelstrom_bench.py: both legs route messages, the figures print."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "maelstrom_bench.py"


def test_quick_run_prints_both_legs(capsys):
    spec = importlib.util.spec_from_file_location("maelstrom_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["maelstrom_bench"] = mod
    spec.loader.exec_module(mod)
    assert mod.main(["--seconds", "1", "--clients", "4", "--edn-lines", "50",
                     "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "seed 4" in out and "bare pipe-to-pipe relay" in out and "harness / relay" in out
    harness = next(line for line in out.splitlines() if "tomkit run -w echo" in line)
    assert int(harness.split()[4].replace(",", "")) > 0  # messages per CPU-second
    assert "us of CPU per message" in out
    assert "edn_format" in out
