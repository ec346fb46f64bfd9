"""The class data archive of a scan's JVM (session.ClassArchive, $TOMKIT_SPARK_CDS): none
unless asked for; the first run writes it under a name of its own and only a JVM that
exited cleanly gets it installed (a cut archive crashes every JVM that maps it); later
runs map it; left-overs of killed runs are deleted. No JVM starts: the gateway process
and get_session are replaced."""

from __future__ import annotations

import os

import pytest

from tomkit.traces.generate import clean_trace
from tomkit.traces.writer import write_records

pytest.importorskip("pyspark")

import tomkit.checker.spark.job as job  # noqa: E402
import tomkit.checker.spark.session as session  # noqa: E402


def test_no_archive_unless_asked(monkeypatch, tmp_path):
    monkeypatch.delenv(session.CDS_ENV, raising=False)
    assert session.class_archive("sql") is None
    monkeypatch.setenv(session.CDS_ENV, "")
    assert session.class_archive("sql") is None


def test_first_run_writes_later_runs_map(monkeypatch, tmp_path):
    monkeypatch.setenv(session.CDS_ENV, str(tmp_path / "cds"))
    first = session.class_archive("sql")
    assert first.pending == f"{first.path}.{os.getpid()}.tmp"
    assert first.java_options()[0] == f"-XX:ArchiveClassesAtExit={first.pending}"
    assert session.JVM_LOG[-1] in first.java_options()  # its thousands of lines silenced
    # one archive per engine: each holds the classes its own engine loads
    assert session.class_archive("files").path != first.path
    with open(first.path, "wb") as f:
        f.write(b"archive")
    later = session.class_archive("sql")
    assert later.pending is None and later.path == first.path
    assert later.java_options()[0] == f"-XX:SharedArchiveFile={first.path}"


def test_left_overs_of_runs_gone_are_deleted(monkeypatch, tmp_path):
    path = session.class_archive("sql", str(tmp_path)).path
    gone, running = f"{path}.999999999.tmp", f"{path}.{os.getpid()}.tmp"
    for p in (gone, running):
        open(p, "wb").close()
    session.class_archive("sql", str(tmp_path))
    assert not os.path.exists(gone) and os.path.exists(running)


class _Proc:
    def __init__(self, code: int, writes: str | None):
        self.code, self.writes, self.stdin = code, writes, self
        self.closed = False

    def close(self):
        self.closed = True

    def wait(self, timeout=None):
        assert self.closed  # the gateway exits at the end of its standard input
        if self.writes:
            with open(self.writes, "wb") as f:
                f.write(b"archive")
        return self.code


class _Spark:
    stopped = False

    def stop(self):
        self.stopped = True


@pytest.mark.parametrize("code", [0, 1])
def test_only_a_clean_exit_installs_the_archive(monkeypatch, tmp_path, code):
    from pyspark import SparkContext

    a = session.class_archive("sql", str(tmp_path))

    class Gateway:
        proc = _Proc(code, a.pending)

    monkeypatch.setattr(SparkContext, "_gateway", Gateway())
    spark = _Spark()
    a.adopt(spark)
    assert spark.stopped and not os.path.exists(a.pending)
    assert os.path.exists(a.path) == (code == 0)


def test_a_mapped_archive_leaves_the_session_alone(tmp_path):
    a = session.ClassArchive(str(tmp_path / "a.jsa"))
    spark = _Spark()
    a.adopt(spark)
    assert not spark.stopped


class _Asked(Exception):
    pass


def test_scan_asks_for_the_archive_for_its_own_jvm_only(monkeypatch, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write_records(d / "part-0.parquet", clean_trace("t", n_processes=3, n_messages=4),
                  grouped=True)
    asked = {}

    def fake(master, **kw):
        asked.update(kw)
        raise _Asked

    monkeypatch.setattr(session, "get_session", fake)
    monkeypatch.setenv(session.CDS_ENV, str(tmp_path / "cds"))
    monkeypatch.setattr(job.SparkSession, "getActiveSession", staticmethod(lambda: None))
    with pytest.raises(_Asked):
        job.main([str(d), "--engine", "sql"])
    assert asked["archive"].path.endswith(".jsa") and "-sql-" in asked["archive"].path
    # a session already running (its JVM started by someone else): no archive
    monkeypatch.setattr(job.SparkSession, "getActiveSession", staticmethod(lambda: object()))
    with pytest.raises(_Asked):
        job.main([str(d), "--engine", "sql"])
    assert asked["archive"] is None
