"""The dynamic hybrid token-site / symmetric protocol (Rodrigues, Fonseca and Verissimo,
001): ``vsync`` (the view-synchronous layer it runs over), ``wire`` (its messages and
tickets), ``switch`` (mode-switching decisions), ``process`` (the process),
``protocol`` (its protocol description and variants), ``latency`` (001's latency
measure). Specified in ``specs/Hybrid/``."""
