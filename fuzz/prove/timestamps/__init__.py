"""ABCAST and TOMP (Dasser, 004) proved by induction over the state of n hosts:

* :mod:`~tomkit.fuzz.prove.timestamps.state`: the symbolic state and the transitions;
* :mod:`~tomkit.fuzz.prove.timestamps.invariant`: the invariant and the safety property;
* :mod:`~tomkit.fuzz.prove.timestamps.solve`: base case, inductive step per transition,
  safety;
* :mod:`~tomkit.fuzz.prove.timestamps.bmc`: bounded model checking from the initial state,
  to refute a broken variant with a reachable run;
* :mod:`~tomkit.fuzz.prove.timestamps.replay`: that run replayed on the model
  (``model/abcast/``), as a trace.
"""
