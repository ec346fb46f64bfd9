"""Experiment runners used by ``bench/`` and the demo: ``toto`` (ToTo's section 6
metrics, 000), ``hybrid`` (001's figures), ``qos`` (003's bounds and the QoS demo)."""
