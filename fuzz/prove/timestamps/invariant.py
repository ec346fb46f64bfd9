"""The inductive invariant of ABCAST and TOMP (004 sections 2 and 3.2), and the safety
property it implies, over the symbolic state of ``timestamps.py``.

Notation (004's names where it has them): F(m) is m's final timestamp ``tsmi_ts``, the
greatest proposal ``ack_mi_ts`` over all hosts (defined once m is decided, i.e. every
ack is collected); ``local_ts`` of host j is c(j); m's proposal by j is ``pc(m, j).j``.
The *lower bound* LB(j, m) of j's proposal for m is that proposal once j made it, and
before: ``(c(j) + 1).j`` for ABCAST, ``(c(j) + 1 + mi_id - next_mid_j(sender)).j`` for
TOMP, whose j receives the sender's messages in sequence (3.2.1), one counter increment
each. Every final timestamp m can ever get is at least LB(j, m) for every j, because
LB(j, m) never decreases (checked: ``bounds-grow``) and ends at j's proposal, which the
final is the maximum of.

The invariant (one conjunct per name; m, m' range over messages, h, j, k over hosts):

* ``domain``: a message is sent by a host, identifiers start at 1 (3.2.2.1); labels
  are one of none, ud, dl, done; counters are not negative, TOMP's next_mid not below
  1. TOMP ``distinct-ids``: an identifier names one message of its sender (ABCAST's
  safety does not read identifiers). TOMP ``same-sender``: two messages of one sender
  see the same ``next_mid`` entry at every host (a fact of the projection, see
  ``timestamps.py``).
* TOMP ``in-sequence``: h has received m iff ``mi_id < next_mid_h(sender)``.
* ``acks-after-data``: a collected proposal comes from a host that received m.
* ``final-after-decision``: a validation message is received only once m is decided.
* ``dl-iff-final``: m is dl or delivered at h iff h received its validation message.
* ``dl-carries-final``: a dl or delivered m has timestamp F(m) at h.
* ``proposal-below-counter``: ``1 <= pc(m, j) <= c(j)``: local_ts is never below what j
  proposed ("a local sequence number incremented after each new message reception").
* ``proposals-distinct``: j never proposes the same counter twice; so final timestamps
  are unique (each is one host's proposal), the fact the dl-first tie order needs.
* ``counter-above-final``: a host that received F(m) has ``c(h) >= counter(F(m))``: the
  counter raise of Birman and Joseph (model/abcast/abcast.py), which 004's literal counter
  lacks.
* ABCAST ``ud-is-proposal``: a ud m at h has h's proposal as timestamp (2.1.1).
* TOMP ``ud-below-final``: a ud m at h has a timestamp at most LB(j, m) for some j: a
  raised timestamp (3.2.3.2) is still a lower bound of the final one, as the paper
  says ("the final timestamp of mk must be greater than or equal to max_next_ts(k)").
* TOMP ``ack-next-mid``: j's ack of m' (``ack_mi``) has, for every m of host k with
  ``Delta = mk_id - ackmi_next_mid(k) >= 0``:
  ``ackmi_ts + 1 + Delta <= LB(j, m)`` (same host j): j had not received m when it
  acknowledged m', and will receive ``Delta`` of k's messages before it, each
  incrementing local_ts. This is why ``max_next_ts(k) + Delta``, taken over the acks
  with the least ``next_mid(k)``, bounds m's final timestamp; ``raise-all`` breaks it.
* ``delivered-below-queue``: at h, every queued m' has a timestamp at least F(m) of
  every m that h delivered (004's delivery condition (2), and the counter raise for
  messages queued later).

The safety property (``no-smaller-final``): if h delivered m and not m', some j has
``LB(j, m') > F(m)``, so no final timestamp m' gets later is smaller than F(m).
With every reachable state satisfying it, each host delivers in increasing final
timestamp order (``ascending``, checked on the delivery transition) and, when it
delivers m', has delivered every message whose final timestamp is smaller (after
delivering m', every message it has not delivered ends above F(m')); so all hosts
deliver prefixes of one sequence: total order, gap-free.

Each conjunct and the safety property speak of at most two messages; this is what makes
three message slots enough for the inductive step (see ``ts_solve.py``).
"""

from __future__ import annotations

from typing import Any

from tomkit.fuzz.prove.timestamps.state import (
    DL,
    DONE,
    NONE,
    UD,
    SymState,
    and_,
    implies,
    or_,
    ts_eq,
    ts_le,
    ts_lt,
)

__all__ = ["CONJUNCTS", "ascending", "bounds_grow", "invariant", "safety"]

#: the invariant's conjuncts in order, for each protocol (module docstring)
CONJUNCTS = {
    "abcast": ("domain", "acks-after-data", "final-after-decision",
               "dl-iff-final", "dl-carries-final", "proposal-below-counter",
               "proposals-distinct", "counter-above-final", "ud-is-proposal",
               "delivered-below-queue"),
    "tomp": ("domain", "distinct-ids", "same-sender", "in-sequence", "acks-after-data",
             "final-after-decision", "dl-iff-final", "dl-carries-final",
             "proposal-below-counter", "proposals-distinct", "counter-above-final",
             "ud-below-final", "ack-next-mid", "delivered-below-queue"),
}


def _pairs(s: SymState) -> list[tuple[int, int]]:
    return [(a, b) for a in s.slots for b in s.slots if a != b]


def invariant(s: SymState) -> list[tuple[str, Any]]:
    """The conjuncts (name, formula) of the invariant at ``s`` (module docstring), each a
    conjunction over the used slots and all hosts."""
    n, U, H = s.n, s.used, s.hosts
    tomp = s.spec.tomp
    out: dict[str, list[Any]] = {name: [] for name in CONJUNCTS[s.spec.protocol]}
    for h in H:
        out["domain"].append(s.c[h] >= 0)
    for m in s.slots:
        u = U[m]
        dom = [s.snd[m] >= 0, s.snd[m] < n, s.sq[m] >= 1]
        dom += [and_(s.st[h][m] >= NONE, s.st[h][m] <= DONE) for h in H]
        dom += [s.nm[h][m] >= 1 for h in H] if tomp else []
        out["domain"].append(implies(u, and_(*dom)))
        fin = s.final(m)
        for h in H:
            if tomp:
                out["in-sequence"].append(implies(
                    u, s.rcv(h, m) == (s.sq[m] < s.nm[h][m])))
            out["acks-after-data"].append(implies(and_(u, s.acol[m][h]), s.rcv(h, m)))
            out["final-after-decision"].append(implies(and_(u, s.frcv[h][m]), s.decided(m)))
            fdl = or_(s.st[h][m] == DL, s.st[h][m] == DONE)
            out["dl-iff-final"].append(implies(u, fdl == s.frcv[h][m]))
            out["dl-carries-final"].append(implies(and_(u, fdl), ts_eq(s.ts(h, m), fin)))
            out["proposal-below-counter"].append(implies(
                and_(u, s.rcv(h, m)), and_(s.pc[m][h] >= 1, s.pc[m][h] <= s.c[h])))
            out["counter-above-final"].append(implies(and_(u, s.frcv[h][m]), fin[0] <= s.c[h]))
            ud = and_(u, s.st[h][m] == UD)
            if tomp:
                out["ud-below-final"].append(implies(
                    ud, or_(*[ts_le(s.ts(h, m), s.lower_bound(j, m)) for j in H])))
            else:
                out["ud-is-proposal"].append(implies(ud, ts_eq(s.ts(h, m), (s.pc[m][h], h))))
    for a, b in _pairs(s):
        both = and_(U[a], U[b])
        if tomp:
            out["distinct-ids"].append(implies(both, or_(s.snd[a] != s.snd[b],
                                                         s.sq[a] != s.sq[b])))
            out["same-sender"].append(implies(and_(both, s.snd[a] == s.snd[b]), and_(
                *[s.nm[h][a] == s.nm[h][b] for h in H])))
        fa = s.final(a)
        for h in H:
            out["proposals-distinct"].append(implies(
                and_(both, s.rcv(h, a), s.rcv(h, b)), s.pc[a][h] != s.pc[b][h]))
            out["delivered-below-queue"].append(implies(
                and_(both, s.st[h][a] == DONE, s.queued(h, b)), ts_le(fa, s.ts(h, b))))
    if tomp:
        for a in s.slots:          # a: the acknowledged message m'
            for b in s.slots:      # b: a message m of host k = snd[b], a itself too
                for j in H:
                    nxt = s.anm[a][j][b]
                    lb = s.lower_bound(j, b)[0]
                    out["ack-next-mid"].append(implies(
                        and_(U[a], U[b], s.rcv(j, a), s.sq[b] >= nxt),
                        s.pc[a][j] + 1 + s.sq[b] - nxt <= lb))
    return [(name, and_(*fs)) for name, fs in out.items()]


def safety(s: SymState) -> Any:
    """``no-smaller-final`` (module docstring): h delivered m, not m' => some LB(j, m') >
    F(m)."""
    out = []
    for a, b in _pairs(s):
        fa = s.final(a)
        for h in s.hosts:
            out.append(implies(
                and_(s.used[a], s.used[b], s.st[h][a] == DONE, s.st[h][b] != DONE),
                or_(*[ts_lt(fa, s.lower_bound(j, b)) for j in s.hosts])))
    return and_(*out)


def ascending(s: SymState, h: Any, x: int) -> Any:
    """``ascending``: every message host h (a Z3 integer or an int) has delivered has a
    final timestamp below F(x), which h is about to deliver."""
    fx = s.final(x)
    return and_(*[implies(and_(h == g, s.used[m], s.st[g][m] == DONE), ts_lt(s.final(m), fx))
                  for g in s.hosts for m in s.slots if m != x])


def bounds_grow(s: SymState, t: SymState) -> Any:
    """``bounds-grow``: no lower bound LB(j, m) decreases from s to its successor t."""
    return and_(*[implies(s.used[m], ts_le(s.lower_bound(j, m), t.lower_bound(j, m)))
                  for m in s.slots for j in s.hosts])
