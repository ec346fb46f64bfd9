"""A Spark standalone cluster on this machine, from the pyspark installation: a master and
some workers on 127.0.0.1 (every port, web UIs included, on loopback and chosen free), for
the tests and the benchmark of the submitted scan, and to try ``spark-submit`` locally.

    with LocalCluster(workdir, workers=2, cores=1) as c:
        subprocess.run(["spark-submit", "--master", c.url, ...])

The master and workers are started with pyspark's ``spark-class`` in their own process
group each, and stopped (SIGTERM, then SIGKILL after a grace period) with every executor
they started; starting waits at most ``timeout`` seconds for the workers to register.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

__all__ = ["LocalCluster", "free_port", "spark_bin"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_bin(name: str) -> str:
    """A script of pyspark's Spark distribution (``spark-class``, ``spark-submit``)."""
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / name)


class LocalCluster:
    def __init__(self, workdir: str | os.PathLike, workers: int = 2, cores: int = 1,
                 memory: str = "1g", env: dict[str, str] | None = None,
                 timeout: float = 90.0, preexec_fn: Callable[[], None] | None = None):
        self.workdir = Path(workdir)
        self.workers, self.cores, self.memory = workers, cores, memory
        self.timeout = timeout
        self.port, self.ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {}),
                    "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_PUBLIC_DNS": "127.0.0.1",
                    "SPARK_DAEMON_MEMORY": "256m",
                    # no REST submission server: one port less, and none to share
                    "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
                    "PYSPARK_PYTHON": (env or {}).get("PYSPARK_PYTHON", sys.executable)}
        self.procs: list[subprocess.Popen] = []
        #: run in each JVM's process before it starts (the tests pass one that makes the
        #: JVMs die with the test process, should it end without stopping them)
        self.preexec_fn = preexec_fn

    def _start(self, name: str, *args: str) -> None:
        log = open(self.workdir / f"{name}.log", "wb")  # noqa: SIM115 (kept for the process)
        self.procs.append(subprocess.Popen(
            [spark_bin("spark-class"), *args], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env=self.env, cwd=self.workdir,
            start_new_session=True, preexec_fn=self.preexec_fn))
        log.close()

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as r:
                return int(json.load(r).get("aliveworkers", 0))
        except (OSError, ValueError):
            return 0

    def start(self) -> LocalCluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui))
        for i in range(self.workers):
            wd = self.workdir / f"worker{i}"
            wd.mkdir(exist_ok=True)
            self._start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", self.url,
                        "--host", "127.0.0.1", "--port", str(free_port()),
                        "--webui-port", str(free_port()), "--cores", str(self.cores),
                        "--memory", self.memory, "--work-dir", str(wd))
        deadline = time.monotonic() + self.timeout
        while self.alive_workers() < self.workers:
            dead = [p.args[1] for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                logs = "\n".join((self.workdir / f).read_text(errors="replace")[-2000:]
                                 for f in sorted(os.listdir(self.workdir))
                                 if f.endswith(".log"))
                raise RuntimeError(f"the Spark standalone cluster did not start "
                                   f"({'exited: ' + ', '.join(dead) if dead else 'timeout'})"
                                   f"\n{logs}")
            time.sleep(0.5)
        return self

    def stop(self, grace: float = 20.0) -> None:
        """Stop the workers (and their executors), then the master."""
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # whatever is left of the group, executors included
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        self.procs = []

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
