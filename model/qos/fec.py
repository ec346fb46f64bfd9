"""The forward-error-correction layer of the QoS-preserving totally ordered multicast,
its burst-loss assumption and the reservation it asks of the network.

Source: 003 (the QoS-preserving totally ordered multicast) section 2.1 (the network:
"burst loss sensitivity of L out of I", the variable-bit-rate reservation) and section
2.2 (the FEC layer); the paper's OCR loses the symbols, the reading aid
(``briefs/001-003.md``, 2.2 and 2.4 B1-B4) reconstructs them and we checked it against
the prose.

A sender hands originals to the layer (``FecSender.send``); when it holds I-L+1 of them
it sends a *block*: the first I-L originals plus L redundant messages, any I-L of which
rebuild the originals. At the end of a slot (``FecSender.end_slot``) the remaining
originals (or one dummy, if none) go out as the slot's last block, again with L
redundant messages. A receiver (``FecReceiver``) delivers originals as they arrive while
a block has no gap; after a gap it waits for ``size - L`` packets of the block and then
rebuilds the rest. Reconstruction is modelled exactly, not numerically: a block is
recoverable iff at least ``size - L`` of its packets arrived (any MDS code, e.g.
Reed-Solomon, has this property; the paper leaves the code to the literature).

Decisions on the text (003 section 2.2):

- B1, the block trigger: "when the layer has [I-L+]1 messages it constructs a block with
  the first [I-L]": one original is always held back, so the slot's last block carries at
  least one original or the dummy.
- Header: the paper tags each packet with (slot, index in block, block size) and a
  last-block bit. We add the block's sequence number in the sender's stream
  (``Packet.block``). Under FIFO and the burst-loss bound the paper's header suffices,
  but a crashing sender escapes the bound and may lose a whole block; without the
  number the receiver would silently merge two blocks' packets.
- B4, order across blocks: a block is delivered only after every earlier block of the
  same sender was; a later complete block behind an unrecoverable one is never
  delivered (the paper's FIFO-with-gaps reading would break FIFO order of a crashed
  sender's messages).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

import numpy as np

__all__ = [
    "DUMMY",
    "BurstLoss",
    "Eos",
    "FecReceiver",
    "FecSender",
    "Packet",
    "packets_per_slot",
    "reserved_avg",
    "reserved_max",
    "within_burst_bound",
]


class _Dummy:
    """The placeholder original of an empty slot (003 section 2.2: "the layer generates a dummy
    message"); dropped on receipt, but its block still yields the end-of-slot marker."""

    def __repr__(self) -> str:
        return "DUMMY"


DUMMY = _Dummy()


class Packet(NamedTuple):
    """One network message of the FEC layer.

    ``index`` runs 1..``size``; indices 1..``size - L`` carry the originals
    (``payload``), the rest are redundant. A redundant packet's ``payload`` is the tuple
    of its block's originals: the symbolic content of the code, which the receiver reads
    only once ``size - L`` packets of the block arrived (then, if an original is
    missing, a redundant packet is among them, since only ``size - L`` are originals).
    """

    slot: int
    block: int
    index: int
    size: int
    last: bool
    payload: object


class Eos(NamedTuple):
    """The end-of-slot marker the FEC layer hands up after a slot's last block."""

    slot: int


def _check_il(i: int, loss: int) -> None:
    if not (isinstance(i, int) and isinstance(loss, int)) or loss < 0 or i - loss < 1:
        raise ValueError(f"FEC needs integers 0 <= L < I, got I={i!r}, L={loss!r}")


@dataclass
class FecSender:
    """The sending half of 003's FEC layer for one process (section 2.2)."""

    i: int
    loss: int
    slot: int = 0
    pending: list = field(default_factory=list)
    blocks: int = 0

    def __post_init__(self) -> None:
        _check_il(self.i, self.loss)

    def _block(self, originals: list, last: bool) -> list[Packet]:
        size = len(originals) + self.loss
        code = tuple(originals)
        payloads = list(originals) + [code] * self.loss
        out = [Packet(self.slot, self.blocks, k + 1, size, last, m) for k, m in enumerate(payloads)]
        self.blocks += 1
        return out

    def send(self, message: object) -> list[Packet]:
        """FEC-send: hold ``message``; at I-L+1 held, send a block of the first I-L (B1)."""
        self.pending.append(message)
        k = self.i - self.loss
        if len(self.pending) < k + 1:
            return []
        originals, self.pending = self.pending[:k], self.pending[k:]
        return self._block(originals, last=False)

    def end_slot(self) -> list[Packet]:
        """FEC-end-slot: send what is held (or a dummy) as the slot's last block."""
        originals = self.pending or [DUMMY]
        self.pending = []
        out = self._block(originals, last=True)
        self.slot += 1
        return out


@dataclass
class _Block:
    size: int
    last: bool
    slot: int
    arrived: dict = field(default_factory=dict)  # index -> payload
    delivered: int = 0  # originals 1..delivered handed up


@dataclass
class FecReceiver:
    """The receiving half of 003's FEC layer for one sender (section 2.2).

    ``receive`` returns what is handed up to the ordering layer, in order: pairs
    ``(slot, message)`` and ``Eos(slot)`` markers.
    """

    loss: int
    next_block: int = 0
    blocks: dict = field(default_factory=dict)  # block number -> _Block

    def receive(self, packet: Packet) -> list:
        """FEC-receive of one packet; later packets of a finished block are discarded."""
        if packet.block < self.next_block:
            return []  # surplus of a block already delivered
        blk = self.blocks.setdefault(packet.block, _Block(packet.size, packet.last, packet.slot))
        if (blk.size, blk.last, blk.slot) != (packet.size, packet.last, packet.slot):
            raise ValueError(f"packet {packet} disagrees with its block's header")
        if packet.index in blk.arrived:
            raise ValueError(f"packet {packet} received twice")
        blk.arrived[packet.index] = packet.payload
        return self._drain()

    def recoverable(self, block: int) -> bool:
        """Whether ``block`` can be rebuilt from what arrived: at least size-L packets."""
        blk = self.blocks.get(block)
        return blk is not None and len(blk.arrived) >= blk.size - self.loss

    def _drain(self) -> list:
        out: list = []
        while self.next_block in self.blocks:
            blk = self.blocks[self.next_block]
            originals = blk.size - self.loss
            code = None
            if self.recoverable(self.next_block):
                upto = originals  # rebuild every missing original (exact: MDS code)
                redundant = range(originals + 1, blk.size + 1)
                code = next((blk.arrived[j] for j in redundant if j in blk.arrived), None)
            else:
                # No gap yet: originals 1..upto arrived in a row and are handed up at once.
                upto = blk.delivered
                while upto < originals and upto + 1 in blk.arrived:
                    upto += 1
            for k in range(blk.delivered + 1, upto + 1):
                payload = blk.arrived[k] if k in blk.arrived else code[k - 1]  # type: ignore[index]
                if payload is not DUMMY:  # the dummy is dropped, its block still ends the slot
                    out.append((blk.slot, payload))
            blk.delivered = upto
            if upto < originals:
                break
            del self.blocks[self.next_block]
            self.next_block += 1
            if blk.last:
                out.append(Eos(blk.slot))
        return out


def packets_per_slot(originals: int, i: int, loss: int) -> int:
    """Network messages a sender sends in a slot with ``originals`` application
    messages: n + L*ceil(n/(I-L)) for n >= 1, and 1 + L (the dummy's block) for n = 0."""
    _check_il(i, loss)
    if originals == 0:
        return 1 + loss
    return originals + loss * math.ceil(originals / (i - loss))


def reserved_max(max_rate: int, i: int, loss: int) -> Fraction:
    """The inflated per-slot reservation: max*I/(I-L) + L (003 section 2.2, reconstructed), and
    at least 1 + L.

    Decision: the reconstructed formula falls short for max = 0 (found by
    ``test_reservation_bounds_every_slot_pattern``): a sender with nothing to send still
    sends the dummy's block, 1 + L messages, every slot, or its receivers would time it
    out. For max >= 1 the formula already exceeds 1 + L.
    """
    _check_il(i, loss)
    return max(Fraction(max_rate * i, i - loss) + loss, Fraction(1 + loss))


def reserved_avg(avg_rate: int, k: int, i: int, loss: int) -> Fraction:
    """The inflated per-K-slots reservation: avg*I/(I-L) + K*(L+1) (003 section 2.2,
    reconstructed: a slot with n originals sends at most n*I/(I-L) + L, an empty one 1+L)."""
    _check_il(i, loss)
    return Fraction(avg_rate * i, i - loss) + k * (loss + 1)


def within_burst_bound(lost: Sequence[bool], i: int, loss: int) -> bool:
    """Whether a link's loss pattern keeps 003's "L out of I": at most L losses in every
    window of I consecutive messages (a shorter pattern counts as one window)."""
    _check_il(i, loss)
    arr = np.asarray(lost, dtype=np.int64)
    if arr.size <= i:
        return int(arr.sum()) <= loss
    windows = np.convolve(arr, np.ones(i, dtype=np.int64), mode="valid")
    return bool(windows.max() <= loss)


@dataclass
class BurstLoss:
    """A loss adversary per link that loses up to L of any I consecutive messages
    (003 section 2.1), never more: a message is lost with probability ``p`` when the last I-1
    messages of its link lost fewer than L. ``exempt`` links (e.g. a crashing sender's,
    or none) may be handled by the caller; the adversary only judges what it is asked."""

    i: int
    loss: int
    p: float
    rng: np.random.Generator
    history: dict = field(default_factory=dict)  # link -> recent loss bits, at most I-1

    def __post_init__(self) -> None:
        _check_il(self.i, self.loss)
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"loss probability must be in [0, 1], got {self.p!r}")

    def lose(self, link: Hashable) -> bool:
        """Decide the fate of the next message on ``link``: True if it is lost."""
        recent = self.history.setdefault(link, [])
        lost = sum(recent) < self.loss and bool(self.rng.random() < self.p)
        recent.append(lost)
        if len(recent) > self.i - 1:
            del recent[0]
        return lost
