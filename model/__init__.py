"""Executable reference models of the protocols, behind one process interface.

* The interface and the protocol registry: ``process`` (what every protocol's process
  implements, and a protocol's description), ``protocols`` (every protocol by name).
* Driving them: ``sim`` (the one discrete-event simulator), ``network`` (link delays and
  application sources), ``recorder`` (outputs as v1 trace records), ``conform`` (the one
  replayer of recorded traces).
* The ToTo family (papers 000 and 002): ``dag`` (causally closed DAG views), ``vocab``
  (the vocabulary delivery rules are written in, and its concrete interpretation),
  ``rules`` (all-ack, ToTo, S-ToTo, G-ToTo, GL-ToTo as pure functions, and a driver),
  ``compiled`` (rules compiled per number of candidates, for speed), ``toto`` (the
  process: a DAG view, a rule and Transis' idle ACKs), ``mutants`` (broken rules).
* ABCAST and TOMP (paper 004): ``abcast``, ``tomp``.
* ``dataset``: data sets of many simulated traces, some faulty, for ``tomkit scan``.

``model`` imports nothing of tomkit but ``traces`` (tests/test_layers.py).
"""
