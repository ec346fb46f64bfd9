"""The scan submitted to a real Spark standalone cluster, as docs/spark.md says.

A master and two workers (one core each) on 127.0.0.1, started from pyspark's own
scripts (``checker/spark/cluster.py``; the ``spark_cluster`` fixture of conftest.py,
shared with the benchmark's smoke test) and stopped at the end of the session. The test
builds tomkit's wheel, takes the ``spark-submit`` command of docs/spark.md word for word
(only the master URL, the data set and the output replaced; test settings come from a
``spark-defaults.conf`` in ``SPARK_CONF_DIR``, as a cluster's would), and compares the
verdicts with ``tomkit check``'s trace by trace: once with the data set on the local disk,
once on a local S3 server (moto), with the endpoint from Spark's Hadoop settings
(``spark.hadoop.fs.s3a.endpoint``) and the credentials from the environment.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from conftest import S3_CREDENTIALS
from locations import ROOT

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.checker.spark.properties import NAMES
from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
from tomkit.traces.writer import write_records

pytest.importorskip("pyspark")

from tomkit.checker.spark.session import QUICK_JVM  # noqa: E402

pytestmark = pytest.mark.spark

MARK = "<!-- tests/checker/spark/test_spark_cluster.py runs the next block"
#: a bound, not a target: at load 20-26 under `nice -n 10`, beside a second cluster, one
#: spark-submit of the small data set took more than 300 s
SUBMIT_TIMEOUT = 900


def documented_submit() -> str:
    text = (ROOT / "docs" / "spark.md").read_text()
    block = text.split(MARK, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.replace("\\\n", " ").strip()


@pytest.fixture
def cluster(spark_cluster):
    return spark_cluster


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory):
    """A directory with dist/tomkit-<version>-py3-none-any.whl, as the docs build it (pure
    Python: TOMKIT_PURE_PYTHON=1)."""
    d = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(d / "dist"), str(ROOT)],
                   check=True, capture_output=True, timeout=300,
                   env={**os.environ, "TOMKIT_PURE_PYTHON": "1"})
    return d


def dataset(root: Path) -> list[list[str]]:
    """A small partitioned JSON Lines data set: every planted fault, clean traces, a bad
    line, and traces spread over one log per process (the second pass). Returns the
    inputs of the reference check: each file on its own, the per-process logs together."""
    groups = []
    k = 0
    for proto in ("a", "b"):
        for cfg in ("x", "y"):
            recs = []
            for fault in list(FAULTS)[k % 2::2]:
                r, _ = faulty_trace(f"{proto}{cfg}-{fault}", fault, seed=k, n_processes=3,
                                    n_messages=6, recv=False,
                                    views=fault in ("view-mismatch", "wrong-view"))
                recs += r
                k += 1
            for j in range(3):
                recs += clean_trace(f"{proto}{cfg}-c{j}", n_processes=3, n_messages=6,
                                    seed=[k, j], recv=False)
            d = root / f"protocol={proto}" / f"config={cfg}"
            d.mkdir(parents=True)
            write_records(d / "part-0.jsonl", recs, grouped=True)
            groups.append([str(d / "part-0.jsonl")])
    # a bad line: reported with its line, the rest checked
    bad = root / "protocol=a" / "config=x" / "part-0.jsonl"
    lines = bad.read_text().splitlines()
    lines.insert(5, '{"trace": "ax-c0", "process": "p0", "kind": "explode"}')
    bad.write_text("\n".join(lines) + "\n")
    d = root / "protocol=b" / "config=split"
    d.mkdir(parents=True)
    per: dict[str, list[dict]] = {}
    for j in range(4):
        for r in clean_trace(f"split-{j}", n_processes=3, n_messages=6, seed=j, recv=False):
            per.setdefault(r["process"], []).append(r)
    random.Random(0).shuffle(per["p0"])  # one log out of order: not grouped any more
    for p, recs in per.items():
        write_records(d / f"log-{p}.jsonl", recs, grouped=p != "p0")
    groups.append(sorted(str(f) for f in d.iterdir()))
    return groups


def reference(groups: list[list[str]]) -> dict[str, dict[str, str]]:
    out = {}
    for files in groups:
        rep = check_paths(files, select(NAMES, Options()), Options(), keep_going=True,
                          merge=len(files) > 1)
        for o in rep.outcomes:
            out[o.trace] = {n: str(v) for n, v in o.verdicts.items()}
    return out


def verdicts(fs: pafs.FileSystem, out: str) -> dict[str, dict[str, str]]:
    got: dict[str, dict[str, str]] = {}
    for r in pq.read_table(f"{out}/verdicts", filesystem=fs).to_pylist():
        got.setdefault(r["trace"], {})[r["property"]] = r["verdict"]
    return got


def submit(cluster, wheel_dir: Path, tmp: Path, data: str, out: str,
           conf: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The documented command, with this cluster, data set and output."""
    cmd = documented_submit()
    for old, new in (("spark://HOST:7077", cluster.url), ("s3://bucket/traces/", data),
                     ("s3://bucket/scans/run-42", out)):
        assert old in cmd, old
        cmd = cmd.replace(old, new)
    conf_dir = tmp / "conf"
    conf_dir.mkdir(exist_ok=True)
    # the data set is small: the driver and executors with the scan's quick-start JVM
    # options (session.QUICK_JVM), as `tomkit scan` gives a local JVM on small data
    quick = " ".join(QUICK_JVM)
    settings = {"spark.ui.enabled": "false", "spark.executor.memory": "512m",
                "spark.driver.memory": "512m", "spark.driver.extraJavaOptions": quick,
                "spark.executor.extraJavaOptions": quick, **(conf or {})}
    (conf_dir / "spark-defaults.conf").write_text(
        "".join(f"{k} {v}\n" for k, v in settings.items()))
    env = {**os.environ, **S3_CREDENTIALS, "SPARK_CONF_DIR": str(conf_dir),
           "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", cmd], cwd=wheel_dir, env=env, capture_output=True,
                          text=True, timeout=SUBMIT_TIMEOUT)


def check_run(p: subprocess.CompletedProcess, want: dict, got: dict) -> dict:
    assert p.returncode == 1, p.stderr[-3000:]  # violations planted
    assert got == want
    # quiet: tomkit's progress, no Spark log line once tomkit runs (spark-submit's own
    # JVM notice and Hadoop's native-library warning come before it starts)
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert any(ln.startswith("scan: ") and " events in " in ln for ln in err), p.stderr
    noise = [ln for ln in err if not ln.startswith("scan: ")
             and "Using incubator modules" not in ln and "NativeCodeLoader" not in ln]
    assert noise == [], p.stderr
    return json.loads(p.stdout) if p.stdout.startswith("{") else {}


def test_submit_on_a_standalone_cluster(cluster, wheel_dir, tmp_path):
    data = tmp_path / "data"
    want = reference(dataset(data))
    assert {v for t in want.values() for v in t.values()} >= {"holds", "violated", "unknown"}
    out = tmp_path / "scan"
    p = submit(cluster, wheel_dir, tmp_path, str(data), str(out))
    check_run(p, want, verdicts(pafs.LocalFileSystem(), str(out)))
    assert "record(s) rejected" in p.stdout and "part-0.jsonl:6: field 'kind'" in p.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["traces"] == len(want) and report["exit_code"] == 1
    assert (out / "_SUCCESS").exists()


def test_submit_reading_and_writing_s3(cluster, wheel_dir, tmp_path, s3, s3_endpoint):
    fs, bucket = s3
    data = tmp_path / "data"
    want = reference(dataset(data))
    pafs.copy_files(str(data), f"{bucket}/traces", source_filesystem=pafs.LocalFileSystem(),
                    destination_filesystem=fs)
    p = submit(cluster, wheel_dir, tmp_path, f"s3a://{bucket}/traces/",
               f"s3a://{bucket}/scans/run-1",
               conf={"spark.hadoop.fs.s3a.endpoint": s3_endpoint})
    check_run(p, want, verdicts(fs, f"{bucket}/scans/run-1"))
    # records are named as the input names them, not by the executors' copies
    assert f"s3a://{bucket}/traces/protocol=a/config=x/part-0.jsonl:6: field 'kind'" \
        in p.stdout
    with fs.open_input_stream(f"{bucket}/scans/run-1/report.json") as f:
        report = json.loads(f.read())
    assert report["summary"]["traces"] == len(want)
    names = [i.base_name for i in fs.get_file_info(pafs.FileSelector(f"{bucket}/scans"))]
    assert names == ["run-1"]  # no staging directory left
    assert fs.get_file_info(f"{bucket}/scans/run-1/_SUCCESS").type == pafs.FileType.File

