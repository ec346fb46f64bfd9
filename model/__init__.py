"""Executable reference models of the protocols.

ToTo family (papers 000 and 002): ``dag`` (causally closed DAG views), ``vocab`` (the
vocabulary delivery rules are written in, and its concrete interpretation) and ``rules``
(all-ack, ToTo, S-ToTo, G-ToTo, GL-ToTo as pure functions, and a driver).
"""
