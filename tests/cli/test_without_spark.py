"""A user who only checks installs tomkit without the `spark` extra: everything but
`tomkit scan` runs, and `tomkit scan` says in one line what to install."""

import subprocess
import sys

#: run the command line with pyspark unimportable, as without the extra
BLOCKED = """
import importlib.abc
import sys


class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pyspark",):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
import importlib.util
real = importlib.util.find_spec
importlib.util.find_spec = lambda n, *a: None if n.split(".")[0] in ("pyspark",) \\
    else real(n, *a)
from tomkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def tomkit(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKED, *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_scan_without_spark_says_what_to_install(tmp_path):
    r = tomkit("scan", str(tmp_path), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "tomkit[spark]" in lines[0], r.stderr


def test_simulate_and_check_without_spark(tmp_path):
    trace = tmp_path / "run.jsonl"
    r = tomkit("simulate", "--protocol", "toto", "--n", "3", "--messages", "5",
               "--seed", "1", "--out", str(trace), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = tomkit("check", str(trace), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "holds" in r.stdout
