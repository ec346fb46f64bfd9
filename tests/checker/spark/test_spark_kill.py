"""``tomkit scan`` killed with SIGKILL replacing an older result (issue 16, part 3): while
its Spark job writes, and inside its commit (a hook kills it at the chosen step). The old
result stays whole, or the killed run's complete one is installed, by the one-line command
of docs/spark.md or by the next scan before it does anything else; and no temporary
directory is left. (tests/checker/spark/test_scan_commit.py stops the commit at every step.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tomkit.model.dataset import write_bulk
from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records

pyspark = pytest.importorskip("pyspark")

from tomkit.checker.spark.job import scan  # noqa: E402

pytestmark = pytest.mark.spark

RUN = r"""
import os, signal, sys
from tomkit.checker.spark import commit
step = sys.argv[1]
if step != "-":
    commit.HOOK = lambda s: os.kill(os.getpid(), signal.SIGKILL) if s == step else None
from tomkit.checker.spark.job import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A data set of two files of about a million events, a tiny clean one (the old
    result) and a tiny faulty one."""
    root = tmp_path_factory.mktemp("kill")
    big = root / "big"
    write_bulk(str(big), 20000, faulty=0.001, seed=3)
    small = root / "small"
    small.mkdir()
    write_records(small / "part-0.parquet", clean_trace("t", n_processes=2, n_messages=2),
                  grouped=True)
    bad = root / "bad"
    bad.mkdir()
    write_records(bad / "part-0.parquet",
                  faulty_trace("f", "swap", seed=1, n_processes=3, n_messages=4)[0],
                  grouped=True)
    return str(big), str(small), str(bad)


def leftovers(out: Path) -> list[str]:
    return sorted(n for n in os.listdir(out.parent)
                  if n.startswith((f"{out.name}.tmp-", f"{out.name}.old-")))


def verdict(out: Path) -> str | None:
    f = out / "report.json"
    return json.loads(f.read_text())["verdict"] if f.exists() else None


def start(step: str, args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUN, step, *args,
                             "--master", "local[1]"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "TOMKIT_SPARK_MEMORY": "1g"})


def reap(p: subprocess.Popen, timeout: float = 60) -> None:
    """Wait for the killed driver's JVM and Python workers (its process group) to end,
    then end what is left of it."""
    p.wait(timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(p.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL)


def test_killed_while_the_job_writes(spark, data, tmp_path):
    big, small, bad = data
    out = tmp_path / "out"
    scan(spark, small, str(out))
    assert verdict(out) == "holds"
    p = start("-", [big, "--out", str(out)])
    deadline = time.monotonic() + 180
    try:
        while not any((tmp_path / n / "verdicts").is_dir() and
                      any(f.startswith("part-") for f in os.listdir(tmp_path / n / "verdicts"))
                      for n in leftovers(out)):
            assert p.poll() is None, p.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(p.pid, signal.SIGKILL)  # a task has written a part: the job is under way
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        reap(p)
    assert p.returncode == -signal.SIGKILL
    assert verdict(out) == "holds"  # the old result, whole
    assert leftovers(out)  # and the killed run's staging directory
    res = scan(spark, bad, str(out))  # the next run cleans up first
    assert verdict(out) == res.doc["verdict"] == "violated"
    assert leftovers(out) == []


def test_a_bare_output_name_is_below_the_working_directory(spark, data, tmp_path,
                                                            monkeypatch):
    """`tomkit scan DATA --out out --engine sql`: a name without a folder has the working
    directory as its parent (Hadoop's Path refused the empty parent with a traceback)."""
    _, small, _ = data
    monkeypatch.chdir(tmp_path)  # not the session JVM's working directory
    (tmp_path / "out.tmp-0-1-h-x").mkdir()  # a dead run's staging directory
    res = scan(spark, small, "out", engine="sql")
    assert (tmp_path / "out" / "_SUCCESS").exists() and res.doc["verdict"] == "holds"
    assert not (tmp_path / "out.tmp-0-1-h-x").exists()  # recovered first


@pytest.mark.parametrize("atomic", [True, False], ids=["rename", "copy"])
@pytest.mark.parametrize("old", [True, False], ids=["replace", "first"])
def test_hadoop_commit_stopped_at_every_step(spark, tmp_path, old, atomic):
    """The arrow and sql engines' commit, through Spark's Hadoop file system, stopped at
    every step as tests/checker/spark/test_scan_commit.py does: by renames (local disks,
    HDFS), and by
    copies and the marker (object stores such as s3a://, played on the local disk)."""
    import pyarrow.fs as pafs
    from test_scan_commit import stop_at_every_step

    from tomkit.checker.spark.commit import HadoopTree

    tree = HadoopTree(spark, str(tmp_path))
    assert tree.atomic
    tree.atomic = atomic
    stop_at_every_step(tree, pafs.LocalFileSystem(), str(tmp_path), old)


def test_killed_inside_the_commit(spark, data, tmp_path, engine="files"):
    _, small, bad = data
    out = tmp_path / "out"
    scan(spark, small, str(out))
    p = start("aside", [bad, "--out", str(out), "--engine", engine])
    try:
        p.wait(300)
    finally:
        reap(p)
    assert p.returncode == -signal.SIGKILL, p.stderr.read().decode()[-3000:]
    # between the renames: no result under OUT, the old one aside, the new one complete
    assert not out.exists() and len(leftovers(out)) == 2
    r = subprocess.run([sys.executable, "-m", "tomkit.checker.spark.commit", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "installed the complete result" in r.stdout, r.stderr
    assert leftovers(out) == []
    assert verdict(out) == "violated"  # the killed run's result, complete
    assert (out / "_SUCCESS").exists() and (out / "verdicts").is_dir()
    n = spark.read.parquet(str(out / "verdicts")).count()
    assert n > 0
