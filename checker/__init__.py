"""Trace checking: the guarantees of total-order multicast as properties
(:mod:`.properties`), decided on v1 traces by the chunk engine (:mod:`.engine`) or by
Spark at scale (:mod:`.spark`), with reports and witnesses people can read."""
