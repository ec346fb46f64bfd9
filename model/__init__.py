"""Executable reference models of the protocols, behind one process interface.

The kernel, at this folder's top:

* ``process``: what every protocol's process implements (the process interface) and a
  protocol's description, with what it needs from its environment (its capabilities:
  the membership events it honours, a membership service, a timed network);
* ``events``: the membership vocabulary, join, leave, crash, recover, partition, heal,
  one meaning each, and the checked schedule of a run;
* ``protocols``: every protocol by name (the registry);
* ``sim``: the one discrete-event simulator; ``recorder``: outputs as v1 trace records;
* ``conform``: the one replayer of recorded traces;
* ``dataset``: data sets of many simulated traces, some faulty, for ``tomkit scan``.
* ``kernel``: which modules may run compiled (mypyc; the DAG view, the ToTo process, the
  recorder) and when they do: only while all are compiled from the Python files beside
  them (``TOMKIT_PURE_PYTHON=1``: never).

The rooms, one folder each:

* ``net/``: networks and environments: ``net/links.py`` (link delays and application
  sources), ``net/topology.py`` (delays per sender-recipient pair, 001's topologies),
  ``net/load.py`` (load schedules), ``net/clocks.py`` (per-process clocks: skew and
  drift), ``net/timed.py`` (003's timed network);
* ``toto/``: the ToTo family (000, 002): ``toto/dag.py``, ``toto/vocab.py``,
  ``toto/rules.py``, ``toto/compiled.py``, ``toto/process.py``, ``toto/mutants.py``,
  ``toto/membership.py`` (000's membership service);
* ``abcast/``: ABCAST and TOMP (004): ``abcast/abcast.py``, ``abcast/tomp.py``;
* ``hybrid/``: the hybrid token-site / symmetric protocol (001): ``hybrid/vsync.py``,
  ``hybrid/wire.py``, ``hybrid/switch.py``, ``hybrid/process.py``,
  ``hybrid/protocol.py``, ``hybrid/latency.py``;
* ``qos/``: the QoS-preserving multicast (003): ``qos/fec.py``, ``qos/slots.py``,
  ``qos/reserve.py`` (the QoS contract: reservations, renegotiation, the shaper),
  ``qos/wire.py`` (network messages, and receptions as trace records for the replay),
  ``qos/process.py``, ``qos/protocol.py``;
* ``sequencer/``: the classic fixed-sequencer total-order broadcast (Défago, Schiper and
  Urbán 2004, section 4.1), with a view change on the sequencer's crash:
  ``sequencer/process.py``, ``sequencer/protocol.py``.

``model`` imports nothing of tomkit but ``traces`` (tests/test_layers.py); this map names
every module (tests/test_layers.py keeps it true). Experiment runners that use the models
live in ``tomkit/runs/``.
"""

from . import kernel

kernel.install()
