"""ABCAST and TOMP (004) as a symbolic state machine for Z3: the state of n hosts and the
transitions. ``ts_invariant.py`` states the invariant, ``ts_solve.py`` asks the queries.

Source: 004 (Dasser, "TOMP: A Total Ordering Multicast Protocol") section 2.1 (Skeen's
ABCAST as Birman and Joseph ran it) and section 3.2 (TOMP), as ``model/abcast/abcast.py`` and
``model/abcast/tomp.py`` run them; their docstrings give the decisions followed here (the
counter raised by a final timestamp, ties broken dl first, then by sender and id).

The state
---------
Hosts 0..n-1; host h is group member h, its timestamps read ``counter.h`` (a pair,
ordered by counter, then host id). Messages are *slots* 0..M-1: slot m has a sender
``snd[m]``, an identifier ``sq[m]`` (``mi_id``: the sender's sq-th multicast, 3.2.2.1)
and a flag ``used[m]`` (a proof's state holds the used slots; bounded model checking
uses them all). Then:

* per host h: the counter ``c[h]`` (``local_ts``);
* per slot m: ``bc[m]`` (multicast) and ``sent[m]``, the multicasts so far of m's
  sender;
* per host h and slot m: the label ``st[h][m]`` (NONE: not received; UD, DL: in
  R_Queue; DONE: delivered), the queue timestamp ``ts[h][m]``, ``frcv[h][m]`` (the
  validation message of m received) and, TOMP, ``nm[h][m]``: h's ``next_mid`` entry
  for m's sender;
* per slot m and host j: j's proposal ``pc[m][j]`` (``ack_mi_ts`` is ``pc.j``), whether
  the emitter has collected it, ``acol[m][j]``, and, TOMP, ``anm[m][j][b]``: the
  entry of j's ack of m (``ackmi_next_mid``) for slot b's sender;
* bounded model checking only: ``ndel[h]`` and ``dpos[h][m]``, the order of deliveries.

Vectors indexed by host (``next_mid``, ``ackmi_next_mid``, ``min_next_mid``,
``max_next_ts``, the senders' counts) are kept *projected on the slots*: entry b is
the vector's entry for slot b's sender. Nothing reads an entry of a host that sends no
slot, every transition updates a projection from projections (a reception from k
updates the entries of every slot whose sender is k), so the projected machine is an
abstraction of the real one that loses nothing the invariant reads; and no Z3 term
indexes a vector by a symbolic sender.

Messages in flight are implicit, since the network loses, duplicates and invents
nothing: m's data is in flight to h iff m is broadcast and h has not received it; j's
ack iff j received m and the emitter has not collected it; the validation message to h
iff every ack is collected (m is *decided*) and h has not received it. Its content is a
function of the acks: ``tsmi_ts`` = F[m], the greatest proposal (2.1.2), and TOMP's
``min_next_mid``, ``max_next_ts`` folded over all acks as 3.2.2.3 folds them (the fold
does not depend on the acks' order). So the emitters' collected proposals and TOMP
vectors need no variables of their own.

Channels: ABCAST reliable and unordered (as specs/ABCAST: it needs no order). TOMP: each
source's data received in sequence (3.2.1; TompProcess refuses anything else), all
else unordered. Both admit every run of the simulator's FIFO links (model/sim.py), so a proof covers
them.

The transitions
---------------
One input of one host, as ``AbcastProcess.multicast`` / ``receive`` take it:
``multicast`` (x), ``data`` (h receives x: counter + 1, proposal, ud, TOMP next_mid and
the ack's copy), ``ack`` (the emitter collects j's proposal for x), ``final`` (h
receives x's validation message: final timestamp, dl, counter raised to its counter
unless the variant is the literal counter, TOMP's anticipation on the ud messages) and
``deliver`` (x leaves h's queue). Delivery is a transition of its own, enabled whenever
the delivery condition holds, where the model delivers eagerly inside ``on_final``: an
eager run is one whose deliveries follow at once, so a proof covers it; bounded model
checking (``ts_bmc.py``) composes each input with the deliveries it makes
(:func:`deliver_all`) to match the model step for step.

The variants (``VARIANTS``): ``literal-counter`` (``raise_counter=False``: 004's
"incremented after each new message reception", nothing more), ``deliver-ud`` (the head
is delivered even while ud), ``ignore-head`` (every dl message is delivered, head or
not; in queue order, as the model does), TOMP's ``raise-all`` (``max_next_ts`` over all
acks, not only those with the least ``next_mid``).

Terms are built with Python-level shortcuts (``and_``, ``ite``...) so that a transition
with a concrete host or slot collapses to the formula for that host or slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import z3

__all__ = ["DL", "DONE", "KINDS", "LABELS", "NONE", "PROTOCOLS", "UD", "VARIANTS", "Spec",
           "SymState", "and_", "choose", "deliver_all", "deliverable", "fresh_state",
           "implies", "init", "ite", "not_", "or_", "sel", "successor", "truth", "ts_eq",
           "ts_le", "ts_lt", "ts_max"]

NONE, UD, DL, DONE = 0, 1, 2, 3
LABELS = ("none", "ud", "dl", "done")
PROTOCOLS = ("abcast", "tomp")
#: the broken variants of each protocol (module docstring)
VARIANTS: dict[str, tuple[str, ...]] = {
    "abcast": ("literal-counter", "deliver-ud", "ignore-head"),
    "tomp": ("literal-counter", "deliver-ud", "ignore-head", "raise-all"),
}
KINDS = ("multicast", "data", "ack", "final", "deliver")

TS = tuple[Any, Any]


@dataclass(frozen=True)
class Spec:
    """What is encoded: the protocol, the variant (None: as specified), n hosts, M
    slots; ``order`` keeps the delivery order (bounded model checking)."""

    protocol: str
    n: int
    slots: int
    variant: str | None = None
    order: bool = False

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, "
                             f"not {self.protocol!r}")
        if self.variant is not None and self.variant not in VARIANTS[self.protocol]:
            raise ValueError(f"{self.protocol} has no variant {self.variant!r}; it has "
                             f"{', '.join(VARIANTS[self.protocol])}")
        if self.n < 1 or self.slots < 1:
            raise ValueError(f"need n >= 1 hosts and at least one slot, got n = {self.n}, "
                             f"{self.slots} slots")

    @property
    def tomp(self) -> bool:
        return self.protocol == "tomp"

    @property
    def raise_counter(self) -> bool:
        return self.variant != "literal-counter"

    @property
    def broken(self) -> str | None:
        """The model's ``broken=`` argument for this variant."""
        return self.variant if self.variant in ("deliver-ud", "ignore-head",
                                                "raise-all") else None

    @property
    def name(self) -> str:
        return self.protocol + (f"[{self.variant}]" if self.variant else "")


# ------------------------------------------------------------------------ term helpers


def and_(*xs: Any) -> Any:
    """Conjunction, folding Python booleans away."""
    ys = []
    for x in xs:
        if x is True:
            continue
        if x is False:
            return False
        ys.append(x)
    return True if not ys else ys[0] if len(ys) == 1 else z3.And(ys)


def or_(*xs: Any) -> Any:
    ys = []
    for x in xs:
        if x is False:
            continue
        if x is True:
            return True
        ys.append(x)
    return False if not ys else ys[0] if len(ys) == 1 else z3.Or(ys)


def not_(x: Any) -> Any:
    return (not x) if isinstance(x, bool) else z3.Not(x)


def implies(a: Any, b: Any) -> Any:
    return or_(not_(a), b)


def ite(c: Any, a: Any, b: Any) -> Any:
    if c is True:
        return a
    if c is False:
        return b
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):
        if z3.eq(a, b):
            return a
    elif not isinstance(a, z3.ExprRef) and not isinstance(b, z3.ExprRef) and a == b:
        return a
    return z3.If(c, a, b)


def truth(x: Any) -> bool:
    """The value of a closed formula (a Python bool, or a Z3 term without constants)."""
    if isinstance(x, bool):
        return x
    y = z3.simplify(x)
    if not (z3.is_true(y) or z3.is_false(y)):
        raise ValueError(f"not a closed formula: {y}")
    return z3.is_true(y)


def sel(vec: list[Any], k: Any) -> Any:
    """``vec[k]`` for a symbolic index k (an If chain; k is assumed in range)."""
    if isinstance(k, int):
        return vec[k]
    out = vec[-1]
    for i in range(len(vec) - 2, -1, -1):
        out = ite(k == i, vec[i], out)
    return out


def ts_lt(a: TS, b: TS) -> Any:
    """Timestamps ``counter.host``: by counter, then host id (004 section 2.1.1)."""
    return or_(a[0] < b[0], and_(a[0] == b[0], a[1] < b[1]))


def ts_le(a: TS, b: TS) -> Any:
    return or_(a[0] < b[0], and_(a[0] == b[0], a[1] <= b[1]))


def ts_eq(a: TS, b: TS) -> Any:
    return and_(a[0] == b[0], a[1] == b[1])


def ts_max(a: TS, b: TS) -> TS:
    c = ts_lt(a, b)
    return ite(c, b[0], a[0]), ite(c, b[1], a[1])


def ts_ite(c: Any, a: TS, b: TS) -> TS:
    return ite(c, a[0], b[0]), ite(c, a[1], b[1])


# ---------------------------------------------------------------------------- the state


@dataclass
class SymState:
    """One state (module docstring). Lists are indexed [host][slot] for the hosts' views
    (st, tc/ti, frcv, nm, dpos) and [slot][host] for the emitters' (pc, acol, anm);
    ``anm[m][j][b]`` is projected on slot b's sender, as are ``nm`` and ``sent``."""

    spec: Spec
    used: list[Any]
    snd: list[Any]
    sq: list[Any]
    bc: list[Any]
    sent: list[Any]
    c: list[Any]
    nm: list[list[Any]]
    st: list[list[Any]]
    tc: list[list[Any]]
    ti: list[list[Any]]
    frcv: list[list[Any]]
    pc: list[list[Any]]
    acol: list[list[Any]]
    anm: list[list[list[Any]]]
    ndel: list[Any]
    dpos: list[list[Any]]
    width: int | None = None
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    def num(self, v: int) -> Any:
        """A constant of the state's numbers (Python ints mix with Z3 integers, not with
        bit-vectors under an If of two constants)."""
        return z3.BitVecVal(v, self.width) if self.width else v

    @property
    def n(self) -> int:
        return self.spec.n

    @property
    def slots(self) -> range:
        return range(self.spec.slots)

    @property
    def hosts(self) -> range:
        return range(self.spec.n)

    def copy(self) -> SymState:
        """A successor to update in place (lists copied, memo dropped)."""
        return replace(
            self, bc=list(self.bc), sent=list(self.sent), c=list(self.c),
            nm=[list(r) for r in self.nm], st=[list(r) for r in self.st],
            tc=[list(r) for r in self.tc], ti=[list(r) for r in self.ti],
            frcv=[list(r) for r in self.frcv], pc=[list(r) for r in self.pc],
            acol=[list(r) for r in self.acol], anm=[[list(v) for v in r] for r in self.anm],
            ndel=list(self.ndel), dpos=[list(r) for r in self.dpos], _memo={})

    # -------------------------------------------------------------- derived values

    def ts(self, h: int, m: int) -> TS:
        return self.tc[h][m], self.ti[h][m]

    def rcv(self, h: int, m: int) -> Any:
        return self.st[h][m] != NONE

    def queued(self, h: int, m: int) -> Any:
        return or_(self.st[h][m] == UD, self.st[h][m] == DL)

    def decided(self, m: int) -> Any:
        """Every ack of m collected: its validation message is (or was) in flight."""
        return and_(*self.acol[m])

    def final(self, m: int) -> TS:
        """F[m]: the greatest proposal (``tsmi_ts``, 2.1.2), meaningful once decided."""
        key = ("final", m)
        if key not in self._memo:
            best: TS = (self.pc[m][0], self.num(0))
            for j in self.hosts[1:]:
                best = ts_max(best, (self.pc[m][j], self.num(j)))
            self._memo[key] = best
        return self._memo[key]

    def min_next_mid(self, m: int) -> list[Any]:
        """``min_next_mid`` over all acks of m (3.2.2.3, rule (1)), projected: entry b
        for slot b's sender."""
        key = ("mnm", m)
        if key not in self._memo:
            out = []
            for k in self.slots:
                best = self.anm[m][0][k]
                for j in self.hosts[1:]:
                    v = self.anm[m][j][k]
                    best = ite(v < best, v, best)
                out.append(best)
            self._memo[key] = out
        return self._memo[key]

    def max_next_ts(self, m: int) -> list[TS]:
        """``max_next_ts`` over all acks of m, projected: the greatest ``ackmi_ts + 1``
        among the acks whose ``ackmi_next_mid`` entry is the least (3.2.2.3, rule (2));
        the variant ``raise-all`` takes it over every ack."""
        key = ("mnt", m)
        if key not in self._memo:
            mins = self.min_next_mid(m)
            out = []
            for k in self.slots:
                best: TS = (self.num(-1), self.num(-1))
                for j in self.hosts:
                    cand = (self.pc[m][j] + 1, self.num(j))
                    take = ts_lt(best, cand)
                    if self.spec.variant != "raise-all":
                        take = and_(self.anm[m][j][k] == mins[k], take)
                    best = ts_ite(take, cand, best)
                out.append(best)
            self._memo[key] = out
        return self._memo[key]

    def lower_bound(self, j: int, m: int) -> TS:
        """A lower bound of j's proposal for m, hence of every final timestamp m can get:
        the proposal once j made it; before, ``c[j] + 1`` (each reception increments the
        counter, nothing lowers it) and, TOMP, one more per message of m's sender that j
        must receive first (in sequence, 3.2.1): ``c[j] + 1 + sq[m] - next_mid(snd m)``."""
        fut = self.c[j] + 1
        if self.spec.tomp:
            fut = fut + self.sq[m] - self.nm[j][m]
        return ite(self.rcv(j, m), self.pc[m][j], fut), j

    def key_lt(self, h: int, a: int, b: int) -> Any:
        """a before b in h's queue (``AbcastProcess.sort_key``): timestamp, then dl before
        ud, then sender, then identifier."""
        key = ("key", h, a, b)
        if key not in self._memo:
            self._memo[key] = self._key_lt(h, a, b)
        return self._memo[key]

    def _key_lt(self, h: int, a: int, b: int) -> Any:
        ta, tb = self.ts(h, a), self.ts(h, b)
        la, lb = self.st[h][a], self.st[h][b]
        return or_(ts_lt(ta, tb), and_(
            ts_eq(ta, tb),
            or_(and_(la == DL, lb == UD),
                and_(la == lb, or_(self.snd[a] < self.snd[b],
                                   and_(self.snd[a] == self.snd[b], self.sq[a] < self.sq[b]))))))


def fresh_state(spec: Spec, name: str, used: bool | None = None,
                ids: tuple[list[Any], list[Any]] | None = None,
                width: int | None = None) -> SymState:
    """A state of fresh Z3 constants. ``used=True`` makes every slot used (bounded model
    checking); None leaves the flags symbolic (proofs). ``ids``: the slots' (snd, sq) to
    share with another state (a message keeps its sender and identifier). ``width``:
    numbers are bit-vectors of that width (signed), not unbounded integers."""
    n, M = spec.n, spec.slots

    def I(x: str) -> Any:  # noqa: E743
        return z3.BitVec(f"{name}.{x}", width) if width else z3.Int(f"{name}.{x}")

    def B(x: str) -> Any:
        return z3.Bool(f"{name}.{x}")

    tomp = spec.tomp
    return SymState(
        spec=spec,
        used=[True if used else B(f"used{m}") for m in range(M)],
        snd=list(ids[0]) if ids else [I(f"snd{m}") for m in range(M)],
        sq=list(ids[1]) if ids else [I(f"sq{m}") for m in range(M)],
        bc=[B(f"bc{m}") for m in range(M)],
        sent=[I(f"sent{m}") for m in range(M)],
        c=[I(f"c{h}") for h in range(n)],
        nm=[[I(f"nm{h}_{m}") for m in range(M)] if tomp else [] for h in range(n)],
        st=[[I(f"st{h}_{m}") for m in range(M)] for h in range(n)],
        tc=[[I(f"tc{h}_{m}") for m in range(M)] for h in range(n)],
        ti=[[I(f"ti{h}_{m}") for m in range(M)] for h in range(n)],
        frcv=[[B(f"frcv{h}_{m}") for m in range(M)] for h in range(n)],
        pc=[[I(f"pc{m}_{j}") for j in range(n)] for m in range(M)],
        acol=[[B(f"acol{m}_{j}") for j in range(n)] for m in range(M)],
        anm=[[[I(f"anm{m}_{j}_{b}") for b in range(M)] if tomp else [] for j in range(n)]
             for m in range(M)],
        ndel=[I(f"ndel{h}") if spec.order else 0 for h in range(n)],
        dpos=[[I(f"dpos{h}_{m}") if spec.order else 0 for m in range(M)]
              for h in range(n)],
        width=width,
    )


def init(s: SymState) -> Any:
    """The initial state of the used slots: nothing sent, counters 0, next_mid 1; the
    slots stand for distinct messages (sender a host, identifier from 1)."""
    cs: list[Any] = []
    for m in s.slots:
        cs.append(implies(s.used[m], and_(s.snd[m] >= 0, s.snd[m] < s.n, s.sq[m] >= 1)))
        for o in range(m):
            cs.append(implies(and_(s.used[m], s.used[o]),
                              or_(s.snd[m] != s.snd[o], s.sq[m] != s.sq[o])))
    for h in s.hosts:
        cs.append(s.c[h] == 0)
        if s.spec.order:
            cs.append(s.ndel[h] == 0)
    for m in s.slots:
        here = [not_(s.bc[m]), s.sent[m] == 0]
        for h in s.hosts:
            here += [s.st[h][m] == NONE, not_(s.frcv[h][m]), not_(s.acol[m][h])]
            here += [s.nm[h][m] == 1] if s.spec.tomp else []
        cs.append(implies(s.used[m], and_(*here)))
    return and_(*cs)


# -------------------------------------------------------------------------- transitions


def _is(a: Any, b: int) -> Any:
    return a == b


def deliverable(s: SymState, h: int, m: int) -> Any:
    """The delivery condition at h for slot m, per variant (004 section 2.1.2: "(1) it
    must be labelled as deliverable (dl); (2) it must be at the head of the reception
    queue"). ``ignore-head`` drops (2) but delivers in queue order, as the model does."""
    key = ("deliverable", h, m)
    if key in s._memo:
        return s._memo[key]
    st = s.st[h]
    others = [o for o in s.slots if o != m]
    if s.spec.variant == "ignore-head":
        out = and_(st[m] == DL, *[implies(and_(s.used[o], st[o] == DL), s.key_lt(h, m, o))
                                  for o in others])
    else:
        label = s.queued(h, m) if s.spec.variant == "deliver-ud" else st[m] == DL
        out = and_(label, *[implies(and_(s.used[o], s.queued(h, o)), s.key_lt(h, m, o))
                            for o in others])
    s._memo[key] = out
    return out


def _acting(on_h: list[Any], on_x: list[Any]) -> list[tuple[int, int, Any]]:
    """(host, slot, condition) of the pairs that may act: concrete parameters leave one."""
    return [(g, m, on) for g, a in enumerate(on_h) if a is not False
            for m, b in enumerate(on_x) if (on := and_(a, b)) is not False]


def successor(s: SymState, kind: str, h: Any = 0, x: Any = 0, j: Any = 0
              ) -> tuple[Any, SymState]:
    """The guard and the successor state of one transition (module docstring). ``h`` is
    the host that acts (data, final, deliver), ``x`` the slot, ``j`` the acknowledging
    host (ack); each may be a Python int or a Z3 integer (then assumed in range)."""
    sp = s.spec
    t = s.copy()
    on_h = [_is(h, g) for g in s.hosts]
    on_x = [_is(x, m) for m in s.slots]
    xsnd, xsq = sel(s.snd, x), sel(s.sq, x)
    if kind == "multicast":
        guard = or_(*[and_(on_x[m], s.used[m], not_(s.bc[m]), s.sq[m] == s.sent[m] + 1)
                      for m in s.slots if on_x[m] is not False])
        t.bc = [ite(on_x[m], True, s.bc[m]) for m in s.slots]
        t.sent = [ite(or_(on_x[m], xsnd == s.snd[m]), s.sent[m] + 1, s.sent[m])
                  for m in s.slots]
        return guard, t
    if kind == "data":
        acts = _acting(on_h, on_x)
        guard = or_(*[and_(on, s.used[m], s.bc[m], s.st[g][m] == NONE,
                           (s.nm[g][m] == s.sq[m]) if sp.tomp else True)
                      for g, m, on in acts])
        for g in s.hosts:
            if on_h[g] is False:
                continue
            t.c[g] = ite(on_h[g], s.c[g] + 1, s.c[g])
            if sp.tomp:
                # next_mid(hi) <- mi_id + 1, for every slot whose sender is x's
                t.nm[g] = [ite(and_(on_h[g], or_(on_x[b], xsnd == s.snd[b])), xsq + 1,
                               s.nm[g][b]) for b in s.slots]
        for g, m, on in acts:
            t.st[g][m] = ite(on, UD, s.st[g][m])
            t.tc[g][m] = ite(on, s.c[g] + 1, s.tc[g][m])
            t.ti[g][m] = ite(on, g, s.ti[g][m])
            t.pc[m][g] = ite(on, s.c[g] + 1, s.pc[m][g])
            if sp.tomp:
                t.anm[m][g] = [ite(on, t.nm[g][b], s.anm[m][g][b]) for b in s.slots]
        return guard, t
    if kind == "ack":
        acts = _acting([_is(j, q) for q in s.hosts], on_x)
        guard = or_(*[and_(on, s.used[m], s.rcv(q, m), not_(s.acol[m][q]))
                      for q, m, on in acts])
        for q, m, on in acts:
            t.acol[m][q] = ite(on, True, s.acol[m][q])
        return guard, t
    if kind == "final":
        return _final(s, t, on_h, on_x, x)
    if kind == "deliver":
        acts = _acting(on_h, on_x)
        guard = or_(*[and_(on, s.used[m], deliverable(s, g, m)) for g, m, on in acts])
        for g, m, on in acts:
            t.st[g][m] = ite(on, DONE, s.st[g][m])
            if sp.order:
                t.dpos[g][m] = ite(on, s.ndel[g], s.dpos[g][m])
        if sp.order:
            for g in s.hosts:
                t.ndel[g] = ite(on_h[g], s.ndel[g] + 1, s.ndel[g])
        return guard, t
    raise ValueError(f"unknown transition {kind!r}; expected one of {', '.join(KINDS)}")


def _merge(cases: list[tuple[Any, Any]], default: Any, num: Any) -> Any:
    if isinstance(default, list):
        return [_merge([(c, v[i]) for c, v in cases], d, num) for i, d in enumerate(default)]
    out = default
    for c, v in reversed(cases):
        if type(v) is int and type(out) is int and v != out:
            v, out = num(v), num(out)  # an If of two constants takes the state's sort
        out = ite(c, v, out)
    return out


def choose(cases: list[tuple[Any, SymState]], default: SymState) -> SymState:
    """The state of the first case whose condition holds, else ``default``."""
    t = default.copy()
    for f in ("bc", "sent", "c", "nm", "st", "tc", "ti", "frcv", "pc", "acol", "anm",
              "ndel", "dpos"):
        setattr(t, f, _merge([(c, getattr(v, f)) for c, v in cases], getattr(default, f),
                             default.num))
    return t


def deliver_all(s: SymState, h: int) -> SymState:
    """h delivers while it can, as ``AbcastProcess`` does at the end of an input: the
    first deliverable message (there is at most one), as often as there are slots."""
    for _ in s.slots:
        cases = [(c, successor(s, "deliver", h, m)[1]) for m in s.slots
                 if (c := deliverable(s, h, m)) is not False]
        if not cases:
            break
        s = choose(cases, s)
    return s


def _final(s: SymState, t: SymState, on_h: list[Any], on_x: list[Any], x: Any
           ) -> tuple[Any, SymState]:
    """h receives x's validation message (2.1.2; TOMP 3.2.3.2). As the model: a message
    already delivered (``deliver-ud``) is ignored; otherwise it takes the final timestamp
    and dl, the counter is raised, and TOMP raises the ud messages' timestamps."""
    sp = s.spec
    acts = _acting(on_h, on_x)
    guard = or_(*[and_(on, s.used[m], s.decided(m), not_(s.frcv[g][m])) for g, m, on in acts])

    def of_x(f: Any) -> Any:  # a value of x's validation message
        return f(x) if isinstance(x, int) else sel([f(m) for m in s.slots], x)

    fx = (of_x(lambda m: s.final(m)[0]), of_x(lambda m: s.final(m)[1]))
    if sp.tomp:
        mnm = [of_x(lambda m, b=b: s.min_next_mid(m)[b]) for b in s.slots]
        mnt_c = [of_x(lambda m, b=b: s.max_next_ts(m)[b][0]) for b in s.slots]
        mnt_i = [of_x(lambda m, b=b: s.max_next_ts(m)[b][1]) for b in s.slots]
    for g in s.hosts:
        if on_h[g] is False:
            continue
        applies = []
        for m in s.slots:
            on = and_(on_h[g], on_x[m])
            if on is False:
                continue
            t.frcv[g][m] = ite(on, True, s.frcv[g][m])
            a = and_(on, s.st[g][m] == UD)
            applies.append(a)
            t.st[g][m] = ite(a, DL, s.st[g][m])
            t.tc[g][m], t.ti[g][m] = ts_ite(a, s.final(m), s.ts(g, m))
        here = or_(*applies)
        if sp.raise_counter:
            t.c[g] = ite(and_(here, s.c[g] < fx[0]), fx[0], s.c[g])
        if not sp.tomp:
            continue
        for m in s.slots:
            # 3.2.3.2: for every ud mk of host hk, Delta = mk_id - min_next_mid(k); if
            # Delta >= 0, mk_ts <- Maximum(mk_ts, max_next_ts(k) + Delta)
            delta = s.sq[m] - mnm[m]
            bound = (mnt_c[m] + delta, mnt_i[m])
            up = and_(here, not_(on_x[m]), s.st[g][m] == UD, delta >= 0,
                      ts_lt(s.ts(g, m), bound))
            t.tc[g][m], t.ti[g][m] = ts_ite(up, bound, (t.tc[g][m], t.ti[g][m]))
    return guard, t
