"""bench/stream_views_bench.py runs end to end on a tiny trace with views: the clean, the
stalled and the two breached traces are decided in the pass with the whole-trace
engine's report (the bench asserts it), the stalled one with its end-of-trace
violations, the breached ones with their order violations."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def test_stream_views_bench_smoke(capsys, tmp_path):
    path = Path(__file__).parent.parent.parent / "bench" / "stream_views_bench.py"
    spec = importlib.util.spec_from_file_location("stream_views_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--smoke", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "decided in the pass" in ln]
    assert len(lines) == 4
    assert lines[0].endswith("violated: none")
    assert "agreement, liveness, member-liveness, validity" in lines[1]
    for breached in lines[2:]:
        assert breached.endswith("global-order, total-order-strong, total-order-weak")
