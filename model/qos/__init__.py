"""The QoS-preserving totally ordered multicast (Bar-Joseph, Keidar, Anker and Lynch,
003): ``fec`` (the forward-error-correcting layer), ``slots`` (slots, join slot and join
window), ``process`` (the slotted ordering layer), ``protocol`` (its protocol
description). It runs on the timed network, ``model/net/timed.py``. Specified in
``specs/QoS/``."""
