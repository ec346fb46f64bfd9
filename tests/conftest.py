"""Markers for the tests that need a Java virtual machine: ``spark`` (a Spark session) and
``tlc`` (the TLC model checker) both imply ``java``, so ``pytest -m "not java"`` is the
fast loop."""

from __future__ import annotations

import pytest

#: tests that start the session's Spark standalone cluster: one xdist group, so that one
#: worker starts it once
CLUSTER_GROUP = "spark-cluster"


def loadgroup(config: pytest.Config) -> bool:
    """Whether this process collects for ``--dist loadgroup``. The tests are collected by
    the xdist workers, not the controller, and a worker's ``dist`` option reads "no"
    (xdist resets it in the worker's config); xdist leaves ``loadgroup`` set there
    instead. Reading ``dist`` alone kept every test ungrouped: a module's tests were
    spread over the workers and the JVM-heavy modules were not put first."""
    return config.getoption("dist", "no") == "loadgroup" or \
        bool(getattr(config.option, "loadgroup", False))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("spark") or item.get_closest_marker("tlc"):
            item.add_marker(pytest.mark.java)
    if not loadgroup(config):
        return
    # `make test` runs the suite on every core (pytest-xdist, --dist loadgroup): a module
    # stays on one worker (its module fixtures, e.g. a Spark session and its data set, are
    # built once), the cluster's users share one; the modules that start a JVM (Spark, TLC,
    # a real system) go first, the pure-Python ones fill in behind them, so that no long
    # module starts last while the other worker idles
    for item in items:
        group = CLUSTER_GROUP if "spark_cluster" in getattr(item, "fixturenames", ()) \
            else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
    heavy = ("spark", "tlc", "record")
    items.sort(key=lambda it: not any(it.get_closest_marker(m) for m in heavy))


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory):
    """A local S3-compatible server (moto's server mode) on 127.0.0.1, for the session:
    its endpoint URL. Any credentials are accepted (the tests use S3_CREDENTIALS)."""
    import os
    import socket
    import subprocess
    import sys
    import time

    from tomkit.checker.spark.cluster import free_port

    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                 "-p", str(port)], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "MOTO_PORT": str(port)})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto server did not start: {log.read_text()}") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


#: what the S3 tests' clients and servers use (moto accepts any)
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "tomkit-test", "AWS_SECRET_ACCESS_KEY": "tomkit-test",
                  "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture
def s3(s3_endpoint):
    """A pyarrow S3FileSystem on the local server, with a new empty bucket: (fs, bucket)."""
    import uuid

    import pyarrow.fs as pafs

    fs = pafs.S3FileSystem(access_key=S3_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                           secret_key=S3_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                           region="us-east-1", scheme="http",
                           endpoint_override=s3_endpoint.split("://")[1],
                           allow_bucket_creation=True)
    bucket = f"tomkit-{uuid.uuid4().hex[:10]}"
    fs.create_dir(bucket)
    return fs, bucket


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A Spark standalone cluster on 127.0.0.1 for the session: a master and two workers of
    one core each (``checker/spark/cluster.py``), their environment holding
    S3_CREDENTIALS (executors read the local S3 server with them)."""
    from tomkit.checker.spark.cluster import LocalCluster

    with LocalCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g",
                      env=S3_CREDENTIALS) as c:
        yield c
