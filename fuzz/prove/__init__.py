"""Proofs with Z3, in two rooms and one bound (see docs/prove.md):

* :mod:`~tomkit.fuzz.prove.delivery`: the ToTo-family delivery rules (Dolev, Kramer and
  Malki 000; Johnson and Maugis 002), every (n, delta), symbolically from the rule bodies;
* :mod:`~tomkit.fuzz.prove.timestamps`: ABCAST and TOMP (Dasser, 004), by induction over
  the state of n hosts, with bounded model checking to refute broken variants;
* :mod:`~tomkit.fuzz.prove.qos_bound`: the QoS protocol's latency bound (Bar-Joseph,
  Keidar, Anker and Lynch, 003).
"""
