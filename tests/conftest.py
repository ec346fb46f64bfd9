"""Markers for the tests that need a Java virtual machine: ``spark`` (a Spark session) and
``tlc`` (the TLC model checker) both imply ``java``, so ``pytest -m "not java"`` is the
fast loop."""

from __future__ import annotations

import pytest

#: tests that start the session's Spark standalone cluster: one scope of the scheduler, so
#: that one worker starts it once
CLUSTER_GROUP = "spark-cluster"


def loadgroup(config: pytest.Config) -> bool:
    """Whether this process runs for ``--dist loadgroup``: the controller (``dist``), or a
    worker, whose ``dist`` option xdist resets to "no" and which reads ``loadgroup``
    instead (reading ``dist`` alone, the workers never grouped nor sorted)."""
    return config.getoption("dist", "no") == "loadgroup" or \
        bool(getattr(config.option, "loadgroup", False))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("spark") or item.get_closest_marker("tlc"):
            item.add_marker(pytest.mark.java)
    if not loadgroup(config):
        return
    # `make test` runs the suite on every core (pytest-xdist, --dist loadgroup; the
    # workers collect, so this runs on each): the modules that start a JVM (Spark, TLC, a
    # real system) go first, the pure-Python ones fill in behind them, so that no long
    # module starts last while the other worker idles
    heavy = ("spark", "tlc", "record")
    items.sort(key=lambda it: not any(it.get_closest_marker(m) for m in heavy))


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup``: a module stays on one worker (its module fixtures, e.g. a
    Spark session and its data set, are built once), and the modules that use the
    session's Spark cluster share one. xdist's own loadgroup reads ``xdist_group``
    markers through a suffix it writes into each test's node id, which pytest 9.2 no
    longer takes (``Item.nodeid`` comes from ``_id``): every test was scheduled alone,
    a module's tests spread over both workers. This scheduler groups by the node id's
    module instead, and needs no marker."""
    if config.getoption("dist", "no") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class ModuleScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log=None) -> None:
            super().__init__(config, log)
            self.cluster_users: dict[str, bool] = {}

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::")[0]
            if module not in self.cluster_users:
                # the controller does not collect: a module names the fixture it uses
                path = root / module
                self.cluster_users[module] = path.is_file() and \
                    "spark_cluster" in path.read_text(encoding="utf-8")
            return CLUSTER_GROUP if self.cluster_users[module] else module

    return ModuleScheduling(config, log)


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
