"""The session ``tomkit scan`` asks for: a small local data set on Spark gets the quick JVM
and shuffle partitions sized to its files; a large or remote one Spark's usual settings;
``--shuffle-partitions`` always wins. No JVM starts: get_session is replaced."""

from __future__ import annotations

import pytest

from tomkit.traces.generate import clean_trace
from tomkit.traces.writer import write_records

pytest.importorskip("pyspark")

import tomkit.checker.spark.job as job  # noqa: E402
import tomkit.checker.spark.session as session  # noqa: E402


class _Asked(Exception):
    pass


def _session_asked(monkeypatch, argv: list[str]) -> dict:
    asked = {}

    def fake(master, **kw):
        asked.update(kw, master=master)
        raise _Asked

    monkeypatch.setattr(session, "get_session", fake)
    with pytest.raises(_Asked):
        job.main(argv)
    return asked


@pytest.fixture
def small(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write_records(d / "part-0.parquet", clean_trace("t", n_processes=3, n_messages=4),
                  grouped=True)
    return str(d)


@pytest.mark.parametrize("engine", ["sql", "arrow"])
def test_small_local_data_set_gets_a_quick_jvm_and_one_partition(monkeypatch, small, engine):
    asked = _session_asked(monkeypatch, [small, "--engine", engine])
    assert asked["quick_start"] is True and asked["shuffle_partitions"] == 1
    assert asked["master"] == "local[*]"


def test_the_files_engine_on_spark_too_and_the_flag_wins(monkeypatch, small):
    asked = _session_asked(monkeypatch, [small, "--spark", "--shuffle-partitions", "6"])
    assert asked["quick_start"] is True and asked["shuffle_partitions"] == 6


def test_a_large_or_remote_data_set_gets_the_usual_session(monkeypatch, small):
    monkeypatch.setattr("tomkit.checker.spark.files.IN_PROCESS_BYTES", 10)
    asked = _session_asked(monkeypatch, [small, "--engine", "sql"])
    assert asked["quick_start"] is False and asked["shuffle_partitions"] is None
    asked = _session_asked(monkeypatch, ["s3a://bucket/data", "--engine", "sql"])
    assert asked["quick_start"] is False and asked["shuffle_partitions"] is None


def test_quick_jvm_options_reach_the_driver_only_for_a_local_master(monkeypatch):
    built = {}

    class Builder:
        def appName(self, name):
            return self

        def master(self, m):
            built["master"] = m
            return self

        def config(self, k, v):
            built[k] = v
            return self

        def getOrCreate(self):
            raise _Asked

    monkeypatch.setattr(session.SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.setattr(session.SparkSession, "builder", Builder())
    for master, quick in (("local[2]", True), ("spark://h:7077", False)):
        built.clear()
        with pytest.raises(_Asked):
            session.get_session(master, quick_start=True)
        opts = built.get("spark.driver.extraJavaOptions", "")
        assert all((o in opts) == quick for o in session.QUICK_JVM), (master, opts)
        assert "log4j2" in opts  # the quiet logging stays
