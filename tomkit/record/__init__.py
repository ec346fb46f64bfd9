"""Recorders: run real group-communication systems on this machine and write v1 traces.

Each recorder starts the system's own processes (from Debian's packages), drives a
small client of ours against them, logs what the system reports to each process
(``send`` before the client hands a message over, ``deliver`` when the system
hands it back, ``view``/``crash``/``join``/``leave`` where the system reports
membership) in that process's local order, and writes the run as one trace.
Every run is bounded in time and kills what it started, also when it is itself
killed (its children die with it, ``PR_SET_PDEATHSIG``).

``python -m tomkit.record SYSTEM --out DIR`` (``make record SYSTEM=...``) records
the system's standard runs; docs/case-studies.md says what they showed.
"""

#: the recorded systems; tomkit.record.<system>.recorder declares each one
#: (``SYSTEM``, a :class:`tomkit.record.system.System`)
SYSTEMS = ("etcd", "corosync", "jgroups", "zookeeper", "nats", "rabbitmq")
