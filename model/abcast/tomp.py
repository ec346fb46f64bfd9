"""TOMP (Dasser) as a deterministic process state machine: ABCAST plus anticipation.

Source: 004 (Dasser, "TOMP: A Total Ordering Multicast Protocol") section 3, Figures 3
and 4 (the example of section 2.2 replayed under TOMP).

TOMP keeps ABCAST's two phases (model/abcast/abcast.py) and exchanges more information, so that
a receiver can raise the timestamps of messages still waiting for their decision and a
decided message stops waiting behind them (section 3.1: it "reduces the delay t_2").

* Reception (3.2.2.2): as ABCAST, and ``next_mid(hi) <- mi_id + 1``; the acknowledgement
  carries a copy of the ``next_mid`` vector (``ackmi_next_mid``), the identifier of the
  next message expected from each host.
* Acknowledgement reception (3.2.2.3), at the emitter, per host j of the group::

      if ackmi_next_mid(j) < min_next_mid(j):
          min_next_mid(j) <- ackmi_next_mid(j);  max_next_ts(j) <- ackmi_ts + 1
      elif ackmi_next_mid(j) == min_next_mid(j):
          max_next_ts(j) <- Maximum(max_next_ts(j), ackmi_ts + 1)

  (before the first acknowledgement ``min_next_mid(j)`` is infinite). ``ts + 1`` adds
  one to the counter and keeps the host id (Figure 3: 17.3 + 1 = 18.3).
* Decision (3.2.3.1): the validation message ``ts_mi`` carries ``tsmi_ts`` (the greatest
  proposal, as in ABCAST), ``min_next_mid`` and ``max_next_ts``.
* Timestamp reception (3.2.3.2): final timestamp, dl; then for every undeliverable
  message mk of host hk in the queue, ``Delta = mk_id - min_next_mid(k)`` and, if
  ``Delta >= 0``, ``mk_ts <- Maximum(mk_ts, max_next_ts(k) + Delta)``; reorder; deliver
  from the head as ABCAST does.

Why the raise is safe (our reading of 3.2.3.2, which the tests exercise): every host j
whose acknowledgement reported ``next_mid(k) = min_next_mid(k)`` receives host k's
messages ``min_next_mid(k), min_next_mid(k) + 1, ...`` after it acknowledged mi, in
order (the links are FIFO: 3.2.1 assumes the lower layer sequences each source), so it
proposes at least ``ackmi_ts + 1 + Delta`` for mk, and the final timestamp, a maximum
over all proposals, is at least ``max_next_ts(k) + Delta``. A raised timestamp is a
lower bound of the final one, as a local proposal is in ABCAST, so the delivery rule
stays sound; with ABCAST's proposals and decisions unchanged, TOMP delivers the same
messages in the same order, never later (tests/model/abcast/test_sim_abcast_tomp.py checks both).
Identifiers are consecutive per sender from 1 (``next_mid(hi) <- mi_id + 1`` and
``Delta`` count on it); a data message out of sequence is refused with ValueError.

Where Figure 4 disagrees with the rules, the rules win: in step 6 the column
``min_next_mid`` reads (m1_id, m2_id + 1, m3_id), but the three ``ackm3_next_mid``
vectors in the same figure, (m1_id, m2_id, m3_id + 1), (m1_id + 1, m2_id + 1,
m3_id + 1) and (m1_id + 1, m2_id, m3_id + 1), have minima (m1_id, m2_id, m3_id + 1)
(the figure swaps the "+ 1" of rows 2 and 3). Its ``max_next_ts`` (16.1, 19.3, 19.3)
agrees with the rules, and no message is still ud in step 7, so the queues are as
drawn. The figure's headers also say ``ackm3_next_ts`` and ``max next_mid`` for
``ackm3_next_mid`` and ``max_next_ts``, and Figure 3's step 2 caption says m2 for m1.
Ties between equal timestamps (Figure 3 step 3: m2 and m3 both at 18.3) are broken as
in :meth:`~tomkit.model.abcast.abcast.AbcastProcess.sort_key`, dl first then by sender, which
reproduces the figure's order.

Planted fault (``broken="raise-all"``, besides ABCAST's): ``max_next_ts(j)`` is the
maximum over *all* acknowledgements, not only those reporting the minimum, so a raise
may overshoot the final timestamp.
"""

from __future__ import annotations

from collections.abc import Sequence

from tomkit.model.abcast import abcast
from tomkit.model.abcast.abcast import (
    BROKEN,
    UD,
    AbcastProcess,
    Ack,
    Data,
    Final,
    Step,
    Timestamp,
)
from tomkit.model.process import Protocol

__all__ = ["TOMP_BROKEN", "VARIANTS", "TompProcess", "protocol"]

TOMP_BROKEN = (*BROKEN, "raise-all")


class TompProcess(AbcastProcess):
    """One TOMP host (module docstring); the arguments are those of
    :class:`~tomkit.model.abcast.abcast.AbcastProcess`. Message identifiers start at 1.

    >>> hosts = {h: TompProcess(h, (1, 2)) for h in (1, 2)}
    >>> data = hosts[1].multicast("a").sends[0].msg
    >>> acks = [hosts[h].receive(data).sends[0].msg for h in (1, 2)]
    >>> acks[1].next_mid                      # host2 expects a's successor and host2's 1
    (2, 1)
    >>> final = hosts[1].receive(acks[0]).sends + hosts[1].receive(acks[1]).sends
    >>> f = final[0].msg
    >>> str(f.ts), f.min_next_mid, [str(t) for t in f.max_next_ts]
    ('1.2', (2, 1), ['2.2', '2.2'])
    """

    protocol = "tomp"

    def __init__(self, host: int, group: Sequence[int], counter: int = 0, *,
                 raise_counter: bool = True, broken: str | None = None,
                 names: Sequence[str] | None = None, control_records: bool = True) -> None:
        super().__init__(host, group, counter, raise_counter=raise_counter, broken=broken,
                         names=names, control_records=control_records)
        #: next_mid(k): the identifier of the next message expected from host k
        self.next_mid: dict[int, int] = {h: 1 for h in self.group}
        #: per own message waiting for acknowledgements: [min_next_mid, max_next_ts]
        self.vectors: dict[str, tuple[list[int | None], list[Timestamp | None]]] = {}

    @classmethod
    def broken_variants(cls) -> tuple[str, ...]:
        return TOMP_BROKEN

    def _open(self, mid: str) -> None:
        n = len(self.group)
        self.vectors[mid] = ([None] * n, [None] * n)

    def _check_data(self, m: Data) -> None:
        want = self.next_mid[m.sender]
        if m.seq != want:
            raise ValueError(f"host {self.host}: message {m.mid!r} of host {m.sender} has "
                             f"identifier {m.seq}, expected {want} (TOMP needs each "
                             "source's messages in sequence, 004 section 3.2.1)")

    def _ack(self, m: Data, ts: Timestamp) -> Ack:
        self.next_mid[m.sender] = m.seq + 1
        return Ack(m.mid, m.sender, self.host, ts,
                   tuple(map(self.next_mid.__getitem__, self.group)))

    def _collect(self, a: Ack) -> None:
        if a.next_mid is None or len(a.next_mid) != len(self.group):
            raise ValueError(f"host {self.host}: acknowledgement of {a.mid!r} from {a.host} "
                             f"without a next_mid vector of {len(self.group)} entries")
        min_next_mid, max_next_ts = self.vectors[a.mid]
        nxt = a.ts.plus(1)
        for j, mid_j in enumerate(a.next_mid):
            low, cur = min_next_mid[j], max_next_ts[j]
            if self.broken == "raise-all":
                min_next_mid[j] = mid_j if low is None else min(low, mid_j)
                max_next_ts[j] = nxt if cur is None else max(cur, nxt)
            elif low is None or mid_j < low:                                     # (1)
                min_next_mid[j] = mid_j
                max_next_ts[j] = nxt                                             # (2)
            elif mid_j == low:
                max_next_ts[j] = nxt if cur is None or nxt > cur else cur

    def _decide(self, mid: str, ts: Timestamp) -> Final:
        min_next_mid, max_next_ts = self.vectors.pop(mid)
        return Final(mid, self.host, ts, tuple(min_next_mid),  # type: ignore[arg-type]
                     tuple(max_next_ts))  # type: ignore[arg-type]

    def _anticipate(self, f: Final, out: Step) -> None:
        if f.min_next_mid is None or f.max_next_ts is None:
            raise ValueError(f"host {self.host}: validation message of {f.mid!r} without "
                             "min_next_mid and max_next_ts")
        for e in self.queue:
            if e.state != UD:
                continue
            k = self.rank[e.sender]
            delta = e.seq - f.min_next_mid[k]
            if delta >= 0:
                bound = f.max_next_ts[k].plus(delta)
                if bound > e.ts:
                    out.raised.append((e.mid, e.ts, bound))
                    e.ts = bound


#: the broken variants of TOMP: ABCAST's and the raise over every acknowledgement
VARIANTS: dict[str, str] = {
    **abcast.VARIANTS,
    "raise-all": "max_next_ts over all acknowledgements, not only those reporting "
                 "min_next_mid: a raise may overshoot the final timestamp",
}


def protocol() -> Protocol:
    return Protocol(
        name="tomp", title="TOMP (Dasser; 004 section 3): ABCAST with anticipation",
        make=abcast.make(TompProcess), options=abcast.options(VARIANTS), fifo=True,
        lossy=False, crashes=False, promises=abcast.PROMISES, replay=abcast.replay,
        summary=abcast.summary, describe=abcast.describe, variants=VARIANTS)
