"""The Spark engine: the same safety properties, evaluated over a whole data set in one job.

``tomkit scan DIR`` (``tomkit/cli/scan.py``) and ``spark-submit ... "$(tomkit scan
--launcher)" DIR`` (``launcher.py``, which runs ``job.py``) check a trace data set: by
default Spark schedules its files and each task checks whole files with tomkit's own engine
(``files.py``, ``files_task.py``; any store pyarrow opens, ``storage.py``); the arrow and
sql engines read it into Spark (``read.py``) and decide the properties in ``mapInArrow``
(``arrow.py``) or with DataFrame operations (``properties.py``, witnesses by ``exact.py``).
One verdict row per trace and property plus an aggregate report per protocol and
configuration (``report.py``, ``summary.py``), committed so that a killed run loses
nothing (``commit.py``), with tomkit's progress line (``progress.py``). docs/spark.md
explains how to run it on a cluster; ``cluster.py`` starts a standalone one on this
machine for the tests and the benchmark.
"""
