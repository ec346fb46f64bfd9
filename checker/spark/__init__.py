"""The Spark engine: the same safety properties, evaluated over a whole data set in one job.

``tomkit scan DIR`` (``tomkit/cli/scan.py``) and ``spark-submit -m tomkit.checker.spark.job``
(``job.py``) read a trace data set (``read.py``), decide every default property of
``checker/properties`` for every trace with DataFrame operations (``properties.py``),
hand the traces found violated (or not settled by the cheap SQL test) to the properties'
reference ``check`` for their witnesses (``exact.py``), and write one verdict row per
trace and property plus an aggregate report per protocol and configuration
(``report.py``). docs/spark.md explains how to run it on a cluster.
"""
