"""Markers for the tests that need a Java virtual machine: ``spark`` (a Spark session) and
``tlc`` (the TLC model checker) both imply ``java``, so ``pytest -m "not java"`` is the
fast loop."""

from __future__ import annotations

import signal
from pathlib import Path

import budget
import pytest
import xdist_schedule as schedule
from hypothesis import settings

# derandomized in the suite (tests/budget.py): the same examples on every run
settings.register_profile("suite", derandomize=True)
settings.register_profile("deep", derandomize=False)
settings.load_profile(budget.PROFILE)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", nargs="?", const=str(schedule.DURATIONS),
                     default=None, metavar="PATH",
                     help="rewrite tests/durations.json (or PATH), each xdist group's "
                          "seconds in this run (tests/xdist_schedule.py)")


def loadgroup(config: pytest.Config) -> bool:
    """Whether this process collects for ``--dist loadgroup``. The xdist workers collect,
    and in a worker's config xdist sets ``dist`` to "no" and ``loadgroup`` instead."""
    return config.getoption("dist", "no") == "loadgroup" or \
        bool(getattr(config.option, "loadgroup", False))


def pytest_configure(config: pytest.Config) -> None:
    # A suite started as a background job of a script (`make test &`, nohup in a
    # subshell) inherits SIGINT ignored, and so would every program a test starts: the
    # tests that press Ctrl-C on `tomkit run` or a recorder would then see it ignored
    # (the run went on to its time limit: a failure with no bug). Python turns an
    # inherited "ignore" into no handler at all, so it is undone here, for this process
    # and, through exec's reset of a handled signal, every child.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # the controller takes the groups in collection order (longest first, below), not
    # xdist's default order by number of tests
    if config.getoption("dist", "no") == "loadgroup":
        config.option.loadscopereorder = False
    if config.getoption("record_durations"):
        config.pluginmanager.register(_DurationRecorder(Path(config.getoption(
            "record_durations"))), "tomkit-durations")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("spark") or item.get_closest_marker("tlc"):
            item.add_marker(pytest.mark.java)
    if not loadgroup(config):
        return
    # `make test` runs the suite on every core (pytest-xdist, --dist loadgroup): a group
    # (a module, or the cluster's users) stays on one worker, its module fixtures built
    # once; the groups go longest first (tests/xdist_schedule.py)
    groups = _groups(items)
    for item, group in zip(items, groups):
        item.add_marker(pytest.mark.xdist_group(group))
    counts: dict[str, int] = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    heavy = {g for it, g in zip(items, groups)
             if any(it.get_closest_marker(m) for m in ("spark", "tlc", "record"))}
    order = schedule.longest_first(groups, schedule.costs(counts, schedule.load(), heavy))
    items[:] = [items[i] for i in order]


def _groups(items: list[pytest.Item]) -> list[str]:
    return schedule.groups_of((it.nodeid, getattr(it, "fixturenames", ())) for it in items)


def _group_in_report(nodeid: str, groups: dict[str, str]) -> str:
    at = nodeid.rfind("@")  # xdist's controller: the worker named the group
    return nodeid[at + 1:] if at > nodeid.rfind("]") else \
        groups.get(nodeid) or schedule.group_of(nodeid)


class _DurationRecorder:
    """Sums each group's test phases (setup, call, teardown: a module fixture's cost is
    in its first test's setup) as the reports reach the controller."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: dict[str, float] = {}
        self.tests: dict[str, int] = {}
        self.groups: dict[str, str] = {}  # collected here: a run without xdist
        self.modules: dict[str, set[str]] = {}  # each module's groups in this run
        self.collected: dict[str, int] = {}  # each group's tests, as collected

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.groups = dict(zip((it.nodeid for it in items), _groups(items)))
        self.collected = _count(self.groups.values())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        self.collected = _count(_group_in_report(i, self.groups) for i in ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        group = _group_in_report(nodeid, self.groups)
        self.seconds[group] = self.seconds.get(group, 0.0) + report.duration
        self.modules.setdefault(schedule.module_of(nodeid), set()).add(group)
        if report.when == "call" or (report.when == "setup" and report.skipped):
            self.tests[group] = self.tests.get(group, 0) + 1

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # a worker: the controller writes
        if hasattr(session.config, "workerinput") or not self.seconds:
            return
        # the groups this run ran whole (an interrupted run, one stopped by -x, a test
        # that errored in its set-up leave some partial); the others keep what the file
        # held, so a long run stopped on a loaded machine still records what it finished
        seconds = schedule.whole(self.seconds, self.tests, self.collected)
        if not seconds:
            return
        schedule.write(self.path, seconds, {g: self.tests.get(g, 0) for g in seconds},
                       absorbed={m for m, gs in self.modules.items()
                                 if m not in gs and gs <= set(seconds)})


def _count(groups) -> dict[str, int]:
    counts: dict[str, int] = {}
    for g in groups:
        counts[g] = counts.get(g, 0) + 1
    return counts


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
    from tomkit.record.log import die_with_parent

    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                 "-p", str(port)], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "MOTO_PORT": str(port)},
                                preexec_fn=die_with_parent)  # as the cluster's JVMs
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
def spark():
    """One local[2] Spark session (one JVM) for every Spark module of the session: `make
    test` runs their tests in one xdist group (tests/xdist_schedule.py, SESSION_GROUP), so
    the JVM starts once per worker rather than once per module. A scan run in the
    process (``tomkit scan --master local[2]``) takes this session as the active one. The
    data sets are small: the JVM options of the scan's quick start (session.QUICK_JVM)."""
    pytest.importorskip("pyspark")
    from tomkit.checker.spark.session import get_session

    return get_session("local[2]", shuffle_partitions=2, driver_memory="1g",
                       quick_start=True)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    """A Spark standalone cluster on 127.0.0.1 for the session: a master and two workers of
    one core each (``checker/spark/cluster.py``), their environment holding
    S3_CREDENTIALS (executors read the local S3 server with them). The master's and
    workers' JVMs, idle but for a few small jobs, run with the scan's quick-start options
    (session.QUICK_JVM)."""
    from tomkit.checker.spark.cluster import LocalCluster
    from tomkit.checker.spark.session import QUICK_JVM
    from tomkit.record.log import die_with_parent

    # its JVMs die with this worker should it end without its teardown (killed, or its
    # controller stopped): a suite stopped that way left a master and workers running
    with LocalCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g",
                      env={**S3_CREDENTIALS,
                           "SPARK_DAEMON_JAVA_OPTS": " ".join(QUICK_JVM)},
                      preexec_fn=die_with_parent) as c:
        yield c


@pytest.fixture
def sigterm_as_ctrl_c():
    """SIGTERM raises in this process as Ctrl-C does (traces/interrupt.py's
    ``terminate_as_interrupt``, as tomkit's commands install it), SIGINT's default
    handler too; both put back after the test."""
    import signal

    from tomkit.traces.interrupt import terminate_as_interrupt

    old_term = signal.getsignal(signal.SIGTERM)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    terminate_as_interrupt()
    yield
    signal.signal(signal.SIGTERM, old_term)
    signal.signal(signal.SIGINT, old_int)
