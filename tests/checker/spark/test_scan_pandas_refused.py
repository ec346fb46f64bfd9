"""`tomkit scan` refuses pyarrow's pandas probe in its own process (a small local data
set is scanned there, as `tomkit check` does: checker/pandas_guard.py) and lifts the
refusal before it starts Spark, whose driver converts through pandas: both give the same
verdicts. Each scan runs in a fresh process (the refusal is process-wide)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records

PROBE = """
import json, sys
from tomkit.cli import main
sys.argv = ["tomkit", *sys.argv[1:]]
code = main()  # no arguments: the command's own process
print(json.dumps({"code": code, "pandas": "pandas" in sys.modules}))
"""


def scan(*args: str) -> tuple[dict, dict]:
    done = subprocess.run([sys.executable, "-c", PROBE, "scan", "--json", *args],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    report, end = json.JSONDecoder().raw_decode(done.stdout)  # printed without a newline
    return report, json.loads(done.stdout[end:].strip().splitlines()[-1])


def test_scan_in_process_and_on_spark_agree(tmp_path):
    pytest.importorskip("pyspark")
    data = tmp_path / "in"
    data.mkdir()
    write_records(str(data / "a.parquet"),
                  clean_trace("ok", n_processes=3, n_messages=4, recv=False)
                  + faulty_trace("bad", "swap", seed=1)[0], grouped=True)
    here, probe = scan(str(data), "--out", str(tmp_path / "here"))
    assert probe == {"code": 1, "pandas": False}
    spark, probe = scan(str(data), "--out", str(tmp_path / "spark"), "--spark",
                        "--master", "local[1]")
    assert probe == {"code": 1, "pandas": True}
    assert here["verdict"] == spark["verdict"] == "violated"
    assert here["summary"] == spark["summary"]
    assert here["groups"] == spark["groups"]
