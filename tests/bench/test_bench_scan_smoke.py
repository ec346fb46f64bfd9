"""bench/scan_bench.py runs end to end on a tiny size and prints its table: local[2] and
the standalone cluster (the session's, from conftest.py) taking turns."""

from __future__ import annotations

import importlib.util

import pytest
from locations import ROOT

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")


def test_scan_bench_smoke(capsys, tmp_path, spark_cluster):
    path = ROOT / "bench" / "scan_bench.py"
    spec = importlib.util.spec_from_file_location("scan_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # the arrow and sql engines' rows take the same path, at many times the cost
    assert mod.main(["--sizes", "100", "--engine", "files", "--no-warmup", "--cluster",
                     "--cluster-url", spark_cluster.url, "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines()
            if len(ln.split()) > 3 and ln.split()[2] == "100"}
    assert set(rows) == {"local[2]", "cluster"}, out
    for cols in rows.values():
        assert cols[1] == "files"
        assert int(cols[3].replace(",", "")) > 10000  # ~100 events a trace, plus planted
        assert float(cols[7]) > 0  # scan / bare read on the same master
    assert float(rows["local[2]"][9]) > 0  # scan / tomkit check
    assert float(rows["cluster"][-1]) > 0  # events per second / local[2]'s
