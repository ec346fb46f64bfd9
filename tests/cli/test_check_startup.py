"""`tomkit check` starts without the heavy modules the check path does not need: a short
check should not wait a second for the protocol models, Z3, Spark or matplotlib."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tomkit.traces.generate import clean_trace
from tomkit.traces.writer import write_records

#: modules `tomkit check` of a clean trace must not import (pandas: pyarrow would import
#: it to ask whether an input is a pandas object; tomkit/cli/check_process.py)
HEAVY = ("networkx", "z3", "matplotlib", "hypothesis", "pyspark", "duckdb", "jsonschema",
         "pandas", "tomkit.model", "tomkit.fuzz", "tomkit.checker.spark")

PROBE = """
import json, sys
from tomkit.cli import main
sys.argv = ["tomkit", *sys.argv[1:]]
code = main()  # no arguments: the command's own process
print(json.dumps({"code": code, "loaded": sorted(m for m in sys.modules
                  if m.split(".")[0] in HEAVY or m.startswith(HEAVY))}))
"""


def loaded_by(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + PROBE, *args],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_check_imports_nothing_heavy(tmp_path):
    for name in ("t.parquet", "t.jsonl"):
        path = tmp_path / name
        write_records(path, clean_trace("a", seed=1) + clean_trace("b", seed=2, views=True))
        out = loaded_by("check", "-q", str(path))
        assert out["code"] == 0
        assert out["loaded"] == [], out["loaded"]


def test_the_probe_sees_heavy_imports(tmp_path):
    # the test of the test: a heavy module imported before the check is reported
    done = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\nimport z3\n" + PROBE, "check", "-q",
         str(_trace(tmp_path))], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "z3" in json.loads(done.stdout.strip().splitlines()[-1])["loaded"]


def _trace(tmp_path):
    path = tmp_path / "t.parquet"
    write_records(path, clean_trace("a", seed=1))
    return path


def test_memory_settings_leave_the_users_own():
    """tomkit check turns numpy's huge pages off unless the environment says otherwise."""
    code = ("import os; from tomkit.cli.check import fresh_memory_settings; "
            "fresh_memory_settings(); print(os.environ['NUMPY_MADVISE_HUGEPAGE'])")
    for given, want in ((None, "0"), ("1", "1")):
        env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
        if given is not None:
            env["NUMPY_MADVISE_HUGEPAGE"] = given
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == want


def test_the_single_pass_takes_pandas_in_the_check_process(tmp_path):
    """The check process refuses pyarrow's pandas import; the single pass, which hashes
    ids with pandas, still runs there and gives the whole-trace check's verdicts."""
    path = _trace(tmp_path)
    for extra in ((), ("--stream",)):
        out = loaded_by("check", "-q", *extra, str(path))
        assert out["code"] == 0
        assert ("pandas" in out["loaded"]) == bool(extra), out["loaded"]


def test_a_program_calling_main_keeps_its_settings(tmp_path):
    """Only the command's own process refuses pandas and changes the allocators: a
    program (or a test) calling main(["check", ...]) keeps its own."""
    code = ("import sys, pyarrow as pa\n"
            "from tomkit.cli import main\n"
            "from tomkit.checker.pandas_guard import refused\n"
            "pool = pa.default_memory_pool().backend_name\n"
            f"assert main(['check', '-q', {str(_trace(tmp_path))!r}]) == 0\n"
            "print(refused(), pa.default_memory_pool().backend_name == pool)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False True"
