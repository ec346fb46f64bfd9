"""Every protocol model, by name: the registry the simulator, the fuzzer, the replayer and
the command line read (each protocol declares itself in its own module)."""

from __future__ import annotations

import difflib

from tomkit.model.abcast import abcast, tomp
from tomkit.model.hybrid import protocol as hybrid_protocol
from tomkit.model.process import Protocol
from tomkit.model.qos import protocol as qos_protocol
from tomkit.model.sequencer import protocol as sequencer_protocol
from tomkit.model.toto import membership
from tomkit.model.toto import process as toto

__all__ = ["PROTOCOLS", "protocol"]

#: name -> protocol, in the order ``tomkit simulate --help`` lists them
PROTOCOLS: dict[str, Protocol] = {
    p.name: p for p in [*toto.protocols(), abcast.protocol(), tomp.protocol(),
                       membership.protocol(), *hybrid_protocol.protocols(),
                       qos_protocol.protocol(), sequencer_protocol.protocol()]}


def protocol(name: str) -> Protocol:
    """The protocol ``name``; ValueError naming the known ones otherwise."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        near = difflib.get_close_matches(str(name), list(PROTOCOLS), n=1)
        raise ValueError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}"
                         + (f"; did you mean {near[0]!r}?" if near else "")) from None
