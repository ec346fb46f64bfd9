"""A SparkSession for the scan: local mode by default, settings for a small machine.

On a cluster, ``spark-submit`` decides master and resources and :func:`get_session`
only adds the SQL settings the scan relies on (they are per session, so they do not
affect other jobs): partition columns stay strings (``config=8`` is a name, not a
number), and co-partitioned joins reuse the one repartition by trace instead of
shuffling again.

Quiet by default: Spark's log level is ERROR from the start (a JVM tomkit starts reads
``log4j2-quiet.properties``; the JVM of ``spark-submit``, already running, is set through
the gateway before the SparkContext starts), and Spark's console progress bar is off
(``progress.py`` prints tomkit's own). ``verbose=True`` leaves Spark's logging alone.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from pyspark.sql import SparkSession

QUIET_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-quiet.properties")

#: the logger of the errors Spark itself ignores (log4j2-quiet.properties)
INBOX_LOGGER = "org.apache.spark.rpc.netty.Inbox"

#: SQL settings the scan sets on any session it runs in
SCAN_CONF = {
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    # joins keyed (trace, msg) may reuse a partitioning by trace alone
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    "spark.sql.adaptive.enabled": "true",
    # inferring filters from the constraints of the SQL engine's plan (a per-trace table
    # of some forty CASE formulas over twenty-odd flags, joined back to the events) took
    # the optimizer 10-14 CPU seconds for one join on a 40-trace data set, more than the
    # whole scan is worth; the scan's own filters are all it needs (docs/spark.md)
    "spark.sql.constraintPropagation.enabled": "false",
}

#: settings of one engine's scan, on top of SCAN_CONF and put back when it ends. The sql
#: engine without adaptive execution: its plan has one shuffle (the events by trace) and
#: everything after it stays within partitions, so adaptive execution has nothing to
#: coalesce or split, while a cached plan under it reports no partitioning and each read
#: of the cached events (the deps' window, the aggregation by trace, the exact checks'
#: join) shuffles them again: three shuffles more, each a stage and a job of its own,
#: and a re-planning after each (docs/spark.md)
ENGINE_CONF = {"sql": {"spark.sql.adaptive.enabled": "false"}}


#: settings of a session tomkit starts (not of one it is handed). PySpark's DataFrame
#: debugging records each Column call's Python call site in the JVM, for the context of
#: an analysis error: five py4j round trips more per call (about 7 instead of 2; measured:
#: 47 against 17 for one when/col/lit expression), and building the SQL engine's query
#: makes some 2,700 such calls. The scan's errors name files and columns themselves.
SESSION_CONF = {"spark.python.sql.dataFrameDebugging.enabled": "false"}


#: JVM options for a scan of a small local data set, where the JVM runs for seconds: its
#: C1 compiler only (C2's optimizing compilations of Spark's planner and generated code
#: cost more CPU than a short run gets back) and the serial collector (no GC threads to
#: start and schedule). Measured on the 40-trace set: docs/spark.md, "Which engine".
QUICK_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


#: a directory for a class data archive of the JVM (AppCDS), opt in: unset, none is made
CDS_ENV = "TOMKIT_SPARK_CDS"
#: the JVM's own warnings to standard error (standard output holds the report), and none
#: of the class archive's: it lists thousands of classes it does not archive
JVM_LOG = ["-Xlog:disable", "-Xlog:all=warning,cds*=off:stderr"]


@dataclass
class ClassArchive:
    """A class data archive of the classes a scan's JVM loads (AppCDS), one per Spark
    version, Java and engine, in the directory of $TOMKIT_SPARK_CDS: a JVM that maps it
    loads those classes without reading, parsing and verifying them from some 250 jars.
    The first run writes it when its JVM exits (``pending``, a name of its own) and
    ``adopt`` renames it into place once that JVM has exited cleanly: an archive cut
    short (a killed run, a full disk) crashes every JVM that maps it, so only a whole one
    ever gets the final name. Measured in docs/spark.md ("Class data archive")."""

    path: str  # the archive
    pending: str | None = None  # where this run writes it, if it is not there yet

    def java_options(self) -> list[str]:
        if self.pending is None:
            return [f"-XX:SharedArchiveFile={self.path}", *JVM_LOG]
        return [f"-XX:ArchiveClassesAtExit={self.pending}", *JVM_LOG]

    def adopt(self, spark: SparkSession, timeout: float = 600) -> None:
        """After the scan: if this run writes the archive, stop Spark, let the JVM exit
        (it writes the archive on its way out) and install the archive if it exited
        cleanly; else nothing."""
        if self.pending is None:
            return
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
        spark.stop()
        if proc is None or proc.stdin is None:
            return
        proc.stdin.close()  # Spark's gateway exits at the end of its standard input
        try:
            ok = proc.wait(timeout) == 0
        except Exception:
            ok = False
        if ok and os.path.isfile(self.pending) and os.path.getsize(self.pending) > 0:
            os.replace(self.pending, self.path)
        else:
            with contextlib.suppress(OSError):
                os.remove(self.pending)


def class_archive(engine: str, directory: str | None = None) -> ClassArchive | None:
    """The class archive for a JVM tomkit starts for ``engine`` (ClassArchive), in
    ``directory`` (default: $TOMKIT_SPARK_CDS; unset or empty: None, no archive). Its name
    holds Spark's version and a hash of the Java binary and the JVM options, so a new
    Spark or Java gets an archive of its own. Left-over archives of runs that are gone
    are deleted."""
    import pyspark

    directory = directory if directory is not None else os.environ.get(CDS_ENV, "")
    if not directory:
        return None
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get(
        "JAVA_HOME") else shutil.which("java") or "java"
    java = os.path.realpath(java)
    stamp = os.stat(java).st_mtime_ns if os.path.exists(java) else 0
    key = hashlib.sha256(f"{java}|{stamp}|{' '.join(QUICK_JVM)}".encode()).hexdigest()[:12]
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"spark-{pyspark.__version__}-{engine}-{key}.jsa")
    for left in glob.glob(f"{glob.escape(path)}.*.tmp"):  # of runs killed while writing
        pid = left.rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                os.remove(left)
    if os.path.isfile(path):
        return ClassArchive(path)
    return ClassArchive(path, f"{path}.{os.getpid()}.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _cores(master: str) -> int:
    inner = master[master.find("[") + 1:master.find("]")] if "[" in master else "1"
    if inner in ("*", ""):
        return os.cpu_count() or 1
    try:
        return max(1, int(inner.split(",")[0]))
    except ValueError:
        return os.cpu_count() or 1


def get_session(master: str | None = "local[*]", app_name: str = "tomkit-scan",
                driver_memory: str | None = None,
                shuffle_partitions: int | None = None, verbose: bool = False,
                conf: dict[str, str] | None = None,
                quick_start: bool = False,
                archive: ClassArchive | None = None) -> SparkSession:
    """The active session, or a new one. With a ``local`` master: UI off, shuffle
    partitions 4 per core (Spark's 200 is meant for clusters), driver memory
    ``driver_memory`` (default $TOMKIT_SPARK_MEMORY or 4g; it is also the executor's
    memory in local mode). ``master=None`` leaves the master to spark-submit. Quiet
    unless ``verbose`` (module docstring). ``conf``: more Spark settings.
    ``quick_start`` (a local master only): the JVM options of QUICK_JVM, for a short run on
    a small data set. ``archive`` (a local master only, and a JVM this call starts): map
    or write that class archive (``class_archive``)."""
    if master is not None and master.startswith("local"):
        # python workers must run this interpreter (which has tomkit), not "python3"
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None:
        apply_conf(active)
        return active
    b = SparkSession.builder.appName(app_name)
    if master is not None:
        b = b.master(master)
    java_options = []
    if not verbose:
        b = b.config("spark.ui.showConsoleProgress", "false")
        if under_spark_submit():  # its JVM runs already
            from pyspark import SparkContext

            SparkContext._ensure_initialized()
            quiet(SparkContext._jvm)
        else:
            java_options.append(f"-Dlog4j2.configurationFile=file:{QUIET_LOG4J}")
    if quick_start and master is not None and master.startswith("local") \
            and not under_spark_submit():
        java_options += QUICK_JVM
    if archive is not None and master is not None and master.startswith("local") \
            and not under_spark_submit():
        java_options += archive.java_options()
    if java_options:
        b = b.config("spark.driver.extraJavaOptions", " ".join(java_options))
    if master is not None and master.startswith("local"):
        cores = _cores(master)
        b = (b.config("spark.ui.enabled", "false")
             # one machine: the driver's services on loopback only
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory",
                     driver_memory or os.environ.get("TOMKIT_SPARK_MEMORY", "4g"))
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions or 4 * cores))
             .config("spark.default.parallelism", str(2 * cores)))
    elif shuffle_partitions:
        b = b.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    for k, v in {**SESSION_CONF, **(conf or {})}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    if not verbose:
        spark.sparkContext.setLogLevel("ERROR")
    apply_conf(spark)
    return spark


def under_spark_submit() -> bool:
    """Is this Python the driver spark-submit started (its JVM already running)?"""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


class JvmStderr:
    """The standard error of spark-submit's JVM, as a text stream: spark-submit merges its
    Python driver's standard error into standard output, which holds the report."""

    def __init__(self, jvm):
        self._err = jvm.System.err

    def write(self, text: str) -> None:
        self._err.print(text)

    def flush(self) -> None:
        self._err.flush()

    def isatty(self) -> bool:
        return False


def quiet(jvm) -> None:
    """Every logger of a running JVM at level ERROR. Spark sets up its default logging
    when it first logs (the SparkContext would), which would undo this: it is made to do
    so first, silently."""
    jvm.org.apache.spark.SparkConf(False).initializeLogIfNecessary(False, True)
    log4j = jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setAllLevels(log4j.LogManager.ROOT_LOGGER_NAME,
                                                log4j.Level.ERROR)
    # errors Spark drops itself ("Inbox: Ignoring error"; log4j2-quiet.properties says why)
    log4j.core.config.Configurator.setLevel(INBOX_LOGGER, log4j.Level.FATAL)


def silent_exit(jvm) -> None:
    """Spark's logging off for the rest of a submitted scan, once its result is written
    and printed: spark-submit's JVM stops the SparkContext after the driver's Python
    exits, and on a standalone cluster the master's one-way notices can reach endpoints
    already stopped ("ERROR TransportRequestHandler: ... Could not find AppClient", a
    race in Spark's shutdown seen at load 24, minutes after the scan's end, like the
    Inbox errors of log4j2-quiet.properties); nothing logged then can change the
    result, and a quiet scan should not end with a stack trace."""
    log4j = jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setAllLevels(log4j.LogManager.ROOT_LOGGER_NAME,
                                                log4j.Level.OFF)


def apply_conf(spark: SparkSession) -> None:
    for k, v in SCAN_CONF.items():
        spark.conf.set(k, v)


@contextlib.contextmanager
def engine_conf(spark: SparkSession, engine: str) -> Iterator[None]:
    """SCAN_CONF, and ENGINE_CONF's settings of ``engine`` for the time of the block (then
    SCAN_CONF's again: the session may serve other engines and jobs)."""
    apply_conf(spark)
    extra = ENGINE_CONF.get(engine, {})
    for k, v in extra.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k in extra:
            if k in SCAN_CONF:
                spark.conf.set(k, SCAN_CONF[k])
            else:
                spark.conf.unset(k)
