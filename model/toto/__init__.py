"""The ToTo family (Dolev, Kramer and Malki 000; Johnson and Maugis 002): ``dag``
(causally closed DAG views), ``vocab`` (the vocabulary delivery rules are written in, and
its concrete interpretation), ``rules`` (all-ack, ToTo, S-ToTo, G-ToTo, GL-ToTo as pure
functions, and a driver), ``compiled`` (rules compiled per number of candidates),
``process`` (the ToTo process: a DAG view, a rule and Transis' idle ACKs), ``mutants``
(broken rules), ``membership`` (000 section 5's membership service, ToTo per
configuration). Specified in ``specs/TotalOrderBroadcast/``."""
