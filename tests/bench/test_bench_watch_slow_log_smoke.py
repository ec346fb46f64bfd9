"""bench/watch_slow_log_bench.py runs end to end on tiny per-process logs: both watch
runs hold (the bench asserts it), and the sends awaited hold fewer records than the
window that waits for them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path


def test_watch_slow_log_bench_smoke(capsys, tmp_path):
    path = Path(__file__).parent.parent.parent / "bench" / "watch_slow_log_bench.py"
    spec = importlib.util.spec_from_file_location("watch_slow_log_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--smoke", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    held = [int(x.replace(",", "")) for x in re.findall(r"held +([\d,]+) records", out)]
    assert len(held) == 2 and held[0] < held[1] // 2, out
