"""Liveness under dynamic membership, without agreed views: joins, leaves and crashes.

Definition (Bar-Joseph, Keidar, Anker and Lynch, "QoS preserving totally ordered
multicast", OPODIS 2000, section 2, Definition 2.1, read at the end of a finite trace):
a process is *correct from its latest join onward* if its latest ``join`` is followed by
no ``leave`` and no ``crash``; Liveness: if p and q are correct from some point on,
every message p sends after that point is eventually delivered by q. Agreement is not
required for messages of faulty senders: a message of a sender that crashes or leaves
may reach one correct process and not another, so ``agreement`` and ``liveness`` do not
fit such protocols; this property does.

Read on a finite trace, with these decisions:

* Membership events are ``join``, ``leave`` and ``crash``. A process is *correct at the
  end* when its last membership event is a ``join``, or it logs none (a member from the
  start). Its membership starts at its latest ``join`` (or at its first event).
* m is *owed* when its sender p is correct at the end and the send follows p's latest
  join in p's own order: a message sent before a crash and a rejoin, or by a process
  that later leaves or crashes, is owed to nobody (the paper exempts faulty senders).
* A correct process q owes an owed m when q *joined before m was sent*: q logs no
  ``join``; or q is the sender; or q's latest join is not after m's send. The default
  reading, ``real-time``, is the paper's: Definition 2.1 speaks of points in real time
  (a process is correct from its ``join_OK``; messages sent *after that point* are
  owed), so the ``real_time`` fields of the two records decide (``join.real_time <=
  send.real_time``), else their ``time`` (a trace of one clock, or of clocks the
  recorder trusts). The ``slot`` reading (``--liveness-reading slot``) judges by
  ``x_slot`` on both records (q's join slot is at most m's slot: 003 waits for a joiner
  in every slot from its join slot on, section 3.3), else ``time``, else ``real_time``.
  The two differ by the clock skew: 003 with join_OK at the start of the join slot, as
  printed, passes the slot reading and fails the real-time one (docs/qos.md, "join_OK
  and real time"; model/qos/process.py). When no clock the reading uses is on both
  records the pair cannot be judged and the trace's verdict is unknown (unless another
  pair is violated).
* The ``join`` record marks the moment the process is a member (the trace format's
  meaning, README "The trace format"): 003's ``join_OK``, at the start of its join slot;
  in a view-synchronous membership, the installation of its first view (``toto-dynamic``
  logs ``join`` just before that ``view`` record, model/toto/membership.py). It is not the
  request to join; a log that records the request should carry the join slot as
  ``x_slot``.
* With views (a view-synchronous membership: Dolev, Kramer and Malki, section 5.1; 003
  has none), a joiner is judged by them, not by clocks: q, whose latest join is followed
  by ``view`` records, owes m exactly when it installs, after that join, the view m was
  sent in (the view the sender had installed at the send, installed after the sender's
  own latest join). A message is delivered in the view it was sent in, so a joiner is
  owed nothing of the views before its first one; by clocks, a send at the instant of
  the view change but still in the old view would be owed. When the sender logs no such
  view, or q none after its join, the clocks decide as above. Traces without views
  (003's) are judged exactly as before.
* A leaver (a process whose latest join is followed by ``leave``) owes nothing and is
  owed nothing after it; a crashed process likewise (Bar-Joseph et al., section 2: it
  is not correct). A process that crashes and joins again is judged from its new join.
* First deliveries are read, as for every other property; ``packet`` records are no
  messages.
* A message id sent more than once (by two processes, or twice by one) is one message
  with several send events, as for fifo-order and causal-order (integrity reports the
  reuse as duplicate-send). Each process's first send of it since its latest join is
  judged as that sender's send: Definition 2.1 obliges q for every message a correct p
  sends after q joined, so the id is owed when any of its senders, correct at the end,
  sent it after its own latest join and after q joined; the witness and the sentence
  name that sender and its send. (The first send by process name alone was judged
  before: a resend by a correct process after a faulty first sender, or after q's join,
  was owed to nobody.) Traces without joins, leaves or crashes owe every sent message to
  every process, whoever sent it, so the vectorized engines decide them alike.

Unknown: a trace without sends, or with an undecidable pair and no violation. Off by
default (a trace cut before the system drained shows messages "not yet" delivered):
name it (``-p member-liveness``) or use the ``qos`` guarantee profile. Witness: the send
of m, q's latest join when it logs one (and, judged by views, q's installation of m's
view), and q's last event.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import CRASH, JOIN, LEAVE, Chunk
from tomkit.checker.properties.base import Option, Options, Property, verdicts
from tomkit.checker.result import Result, Verdict, WitnessEvent
from tomkit.checker.stream.clean import Clean
from tomkit.checker.stream.ledger import Join, Ledger, Stay
from tomkit.checker.trace import Ev, Trace

NAME = "member-liveness"
NO_SENDS = "no send events: nothing to judge"
MEMBERSHIP = ("join", "leave", "crash")


def membership(trace: Trace) -> dict[str, tuple[bool, int]]:
    """Per process: whether it is correct at the end, and the index in its events of its
    latest join (-1: none)."""
    out = {}
    for p in trace.processes:
        last_kind, last_join = None, -1
        for i, e in enumerate(trace.events[p]):
            if e.kind in MEMBERSHIP:
                last_kind = e.kind
                if e.kind == "join":
                    last_join = i
        out[p] = (last_kind in (None, "join"), last_join)
    return out


#: the readings of "joined before the send" (module docstring), the first the default
READINGS = ("real-time", "slot")


def clocks(join: Ev, send: Ev, reading: str) -> list[tuple]:
    """The pairs (join's, send's) of the clocks ``reading`` compares, in its order."""
    real, local = (join.real_time, send.real_time), (join.time, send.time)
    if reading == "real-time":
        return [real, local]
    if reading == "slot":
        return [(join.slot, send.slot), local, real]
    raise ValueError(f"member-liveness reading {reading!r}: must be one of "
                     f"{', '.join(READINGS)}")


def joined_before(join: Ev, send: Ev, reading: str = READINGS[0]) -> bool | None:
    """Whether ``join`` (another process's) is not after ``send`` by the clocks of
    ``reading`` (module docstring); None when none of them is on both records."""
    for a, b in clocks(join, send, reading):
        if a is not None and b is not None:
            return a <= b
    return None


def installed_since_join(trace: Trace, q: str, join: int) -> dict[str, Ev]:
    """The views q installs after its latest join (event index ``join``), by id: each
    one's first ``view`` event."""
    out: dict[str, Ev] = {}
    for e in trace.events[q][join + 1:]:
        if e.kind == "view" and e.view is not None:
            out.setdefault(e.view, e)
    return out


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_sends:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_SENDS)
    mem = membership(trace)
    correct = [p for p in trace.processes if mem[p][0]]
    # joiners with views are judged by them (module docstring)
    views = ({q: installed_since_join(trace, q, mem[q][1]) for q in correct if mem[q][1] >= 0}
             if trace.has_views else {})
    undecided = None
    for p in correct:
        join_p = mem[p][1]
        sent_in = None  # the view p has installed since its latest join
        judged: set[str] = set()  # p's first send of each id since its latest join
        for i, e in enumerate(trace.events[p]):
            if e.kind == "view" and i > join_p:
                sent_in = e.view
            if e.kind != "send" or i < join_p or e.msg in judged:
                continue
            judged.add(e.msg)
            for q in correct:
                if e.msg in trace.delivery_index[q]:
                    continue
                jq = mem[q][1]
                join = trace.events[q][jq] if jq >= 0 else None
                by_view = views.get(q) if q != p and sent_in is not None else None
                if join is None or q == p:
                    owed = True
                elif by_view:
                    owed = sent_in in by_view
                else:
                    owed = joined_before(join, e, options.liveness_reading)
                if owed is None:
                    undecided = undecided or (q, e.msg)
                    continue
                if not owed:
                    continue
                k = sum(x.kind == "send" for x in trace.events[p][:i])
                wit = [WitnessEvent(p, "send", e.msg, k, e.location)]
                if join is not None and q != p:
                    wit.append(W.event(join))
                if by_view:
                    wit.append(W.event(by_view[sent_in]))
                wit.append(W.event(trace.events[q][-1]))
                if by_view:
                    since = f"joined and installed view {sent_in}, the view of the send, and "
                elif join is not None and q != p:
                    a, b = _when(join, e, options.liveness_reading)
                    since = f"joined at {a}, before the send at {b}, and "
                else:
                    since = ""
                text = (f"{p} sends {e.msg} and stays correct; {q} {since}stays correct, "
                        f"but never delivers {e.msg}.")
                return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "never-delivered",
                              {"correct": correct})
    if undecided is not None:
        q, m = undecided
        used = "neither real_time nor time" if options.liveness_reading == "real-time" \
            else "neither x_slot, time nor real_time"
        return Result(NAME, trace.id, Verdict.UNKNOWN,
                      explanation=f"cannot tell whether {q} joined before {m} was sent: "
                      f"{used} is on both records", details={"correct": correct})
    return Result(NAME, trace.id, Verdict.HOLDS, details={"correct": correct})


def _when(join: Ev, send: Ev, reading: str) -> tuple[str, str]:
    """The two moments as the reading compared them."""
    names = {"real-time": ("real time", "time"), "slot": ("slot", "time", "real time")}
    for name, (a, b) in zip(names[reading], clocks(join, send, reading)):
        if a is not None and b is not None:
            return f"{name} {a:g}", f"{name} {b:g}"
    raise AssertionError("judged pair without a clock")


def detect(c: Chunk, options: Options) -> np.ndarray:
    # traces with membership events go to the exact check (who owes what depends on
    # clocks of different processes); the others are static: every process is correct
    # and owes every sent message
    member = np.zeros(c.ntr, bool)
    member[c.t[(c.kind == JOIN) | (c.kind == LEAVE) | (c.kind == CRASH)]] = True
    n_proc = np.bincount(c.tp_trace, minlength=c.ntr)
    got = np.bincount(c.f_tm, minlength=c.ntm)
    sent = c.send_row >= 0
    short = sent & (got < n_proc[c.tm_t])
    violated = np.zeros(c.ntr, bool)
    violated[c.tm_t[short]] = True
    unknown = ~c.trace_has["send"]
    return verdicts(c, violated & ~member & ~unknown, unknown, member & ~unknown)


class _Clocks(NamedTuple):
    """A record's clocks, as joined_before reads them from an event."""

    time: float | None
    real_time: float | None
    slot: int | None


def stream(clean: Clean, options: Options) -> Result | None:
    """A clean single pass (checker/stream/ledger.py): a message a correct process did
    not deliver is held (at or past its position in S, or delivered by none) or retired
    past that process's count in its view (``Ledger.missed``: a member from the start
    that skipped a view, a late member, a rejoin behind the retired prefix), so check's
    pairs (sender, its send, q) are judged in its order on those messages: the held ones
    with their records, the retired ones with their sends on disk (sender, index,
    location, clocks: retired.py), merged by the sender's send index, and each pair
    decided as check decides it (q's latest join, its views since, the two records'
    clocks), a matrix of pairs per sender. None: the whole trace decides (a witness or
    a send's clocks not kept)."""
    if not clean.senders:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_SENDS)
    led = clean.ledger
    if led is None:
        return None
    correct = [p for p in sorted(clean.processes) if led.last_kind.get(p) in (None, "join")]
    done = {"correct": correct}
    retired = _retired_sends(led, correct)
    if retired is None:
        return None
    w = led.window
    reading = options.liveness_reading
    undecided = None
    ends = {q: led.ends(q) for q in correct}
    for p in correct:
        me = led.names.index(p)
        mine = np.flatnonzero(w.sender == me)
        firsts = np.array([-1 if led.stay(p, v) is None else led.stay(p, v).sends
                           for v in range(len(led.view_names))])
        order = firsts[w.view[mine]] + w.rank[mine]
        join_p = led.joins.get(p)
        keep = order >= (join_p.sends if join_p else 0)  # sent after its latest join
        mine, order = mine[keep], order[keep]
        r = retired[me] if me in retired else _NONE
        # the candidates, held (code) and retired (position), by send index
        idx = np.concatenate((order, r.sidx))
        srt = np.argsort(idx, kind="stable")
        key = np.concatenate((mine, r.pos))[srt]
        ret = np.concatenate((np.zeros(len(mine), bool), np.ones(len(r.pos), bool)))[srt]
        view = np.concatenate((w.view[mine], r.view))[srt]
        spos = np.concatenate((w.pos[mine], r.pos))[srt]
        if not len(key):
            continue
        got = np.array([(spos >= 0) & (spos < ends[q][view]) for q in correct])
        if got.all():
            continue
        owed = _owed(led, p, correct, key, ret, view, got, reading)
        if owed is None:
            return None
        bad = ~got & (owed == 1)
        unsure = ~got & (owed == -1)
        hit = np.flatnonzero(bad.any(axis=0))
        first_unsure = np.flatnonzero(unsure.any(axis=0))
        if undecided is None and len(first_unsure) and \
                (not len(hit) or first_unsure[0] <= hit[0]):
            i = int(first_unsure[0])
            undecided = (correct[int(np.flatnonzero(unsure[:, i])[0])], int(key[i]),
                         bool(ret[i]))
        if not len(hit):
            continue
        i = int(hit[0])
        q = correct[int(np.flatnonzero(bad[:, i])[0])]
        v = int(view[i])
        sent_in = led.sent_in(p, v)
        join = led.joins.get(q)
        by_view = led.since_join(q) if q != p and sent_in is not None else {}
        if ret[i]:
            send = led.retired_send(int(key[i]))
            clk = _retired_clock(led, int(key[i]))
        else:
            send, clk = led.send(int(key[i])), led.send_clocks(int(key[i]))
        if send is None:
            return None
        return _violation(clean, led, p, q, send, clk, join, by_view.get(v), sent_in,
                          reading, done)
    if undecided is not None:
        q, k, is_ret = undecided
        m = (led.retired_ids(np.array([k])) or [None])[0] if is_ret else \
            led.ids(np.array([k])).get(k)
        if m is None:
            return None
        used = "neither real_time nor time" if reading == "real-time" \
            else "neither x_slot, time nor real_time"
        return Result(NAME, clean.trace, Verdict.UNKNOWN,
                      explanation=f"cannot tell whether {q} joined before {m} was sent: "
                      f"{used} is on both records", details=done)
    return Result(NAME, clean.trace, Verdict.HOLDS, details=done)


class _Retired(NamedTuple):
    """A sender's retired sends some correct process did not deliver, sent after its
    latest join: their positions, send indexes and views."""

    pos: np.ndarray
    sidx: np.ndarray
    view: np.ndarray


_NONE = _Retired(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))


def _retired_sends(led: Ledger, correct: list[str]) -> dict[int, _Retired] | None:
    """Per correct sender (its code), its retired sends that check would judge: those
    some correct process did not deliver (``Ledger.missed``), sent after the sender's
    latest join. None: a send there is not kept (the whole trace decides)."""
    spans: dict[int, tuple[int, int, int]] = {}
    for q in correct:
        for v, lo, hi in led.missed(q):
            if v not in spans or lo < spans[v][1]:
                spans[v] = (v, lo, hi)
    if not spans:
        return {}
    if led.past is None:
        return None
    since = {led.names.index(p): (led.joins[p].sends if p in led.joins else 0)
             for p in correct}
    floor = np.full(len(led.names) + 1, -1, np.int64)  # per sender code: its join's sends
    for c, n in since.items():
        floor[c] = n
    parts: dict[int, list[tuple[np.ndarray, np.ndarray, int]]] = {}
    for v, pos, rows in led.scan(sorted(spans.values(), key=lambda s: s[1])):
        snd = rows["sender"].astype(np.int64)
        if (snd < 0).any():
            return None  # a send that came after its position retired, not read
        keep = (floor[snd] >= 0) & (rows["sidx"] >= floor[snd])
        for c in np.unique(snd[keep]).tolist():
            mine = keep & (snd == c)
            parts.setdefault(c, []).append((pos[mine], rows["sidx"][mine].astype(np.int64), v))
    return {c: _Retired(np.concatenate([a for a, _, _ in ps]),
                        np.concatenate([b for _, b, _ in ps]),
                        np.concatenate([np.full(len(a), v) for a, _, v in ps]))
            for c, ps in parts.items()}


def _retired_clock(led: Ledger, k: int) -> tuple:
    """The (time, real_time, slot) of the send at retired position k (None: absent)."""
    c = led.retired_clocks(np.array([k]))
    t, rt, sl = (float(c[x][0]) for x in ("time", "real_time", "slot"))
    return (None if np.isnan(t) else t, None if np.isnan(rt) else rt,
            None if np.isnan(sl) else int(sl))


def _owed(led: Ledger, p: str, correct: list[str], key: np.ndarray, ret: np.ndarray,
          view: np.ndarray, got: np.ndarray, reading: str) -> np.ndarray | None:
    """Per (q, candidate): 1 owed, 0 not, -1 undecidable, as check decides each pair
    (module docstring); None: a held send's clocks are not found."""
    out = np.ones((len(correct), len(key)), np.int8)
    sent_in = np.array([led.sent_in(p, int(v)) is not None for v in view], bool)
    clocks: dict[str, np.ndarray] | None = None
    for qi, q in enumerate(correct):
        join = led.joins.get(q)
        if join is None or q == p:
            continue
        since = led.since_join(q)
        by_view = sent_in & bool(since)
        out[qi][by_view] = np.isin(view[by_view], list(since))
        judge = ~by_view & ~got[qi]
        if not judge.any():
            continue
        if clocks is None:
            clocks = _send_clocks(led, key, ret)
            if clocks is None:
                return None
        out[qi][judge] = _joined_before(join.clocks, clocks, judge, reading)
    return out


def _send_clocks(led: Ledger, key: np.ndarray, ret: np.ndarray) -> dict[str, np.ndarray] | None:
    """The candidates' send clocks (NaN: absent); None: a held send's record is not
    found."""
    n = len(key)
    out = {c: np.full(n, np.nan) for c in ("time", "real_time", "slot")}
    if ret.any():
        for c, v in led.retired_clocks(key[ret]).items():
            out[c][ret] = v
    for i in np.flatnonzero(~ret).tolist():
        t = led.send_clocks(int(key[i]))
        if t is None:
            return None
        for c, x in zip(("time", "real_time", "slot"), t):
            out[c][i] = np.nan if x is None else x
    return out


def _joined_before(join: tuple, sends: dict[str, np.ndarray], rows: np.ndarray,
                   reading: str) -> np.ndarray:
    """joined_before on each send of ``rows`` (1, 0, -1: undecidable), vectorized."""
    j = dict(zip(("time", "real_time", "slot"), join))
    names = ["real_time", "time"] if reading == "real-time" else ["slot", "time", "real_time"]
    res = np.full(int(rows.sum()), -1, np.int8)
    for c in names:
        if j[c] is None:
            continue
        s = sends[c][rows]
        ok = (res == -1) & ~np.isnan(s)
        res[ok] = (j[c] <= s[ok]).astype(np.int8)
    return res


def _violation(clean: Clean, led: Ledger, p: str, q: str, send: WitnessEvent,
               clk: tuple | None, join: Join | None, by_view: Stay | None,
               sent_in: str | None, reading: str, done: dict) -> Result | None:
    m = send.msg
    wit = [send]
    if join is not None and q != p:
        wit.append(join.record)
    if by_view is not None:
        wit.append(by_view.record)
    wit.append(led.last_event(q))
    if by_view is not None:
        since = f"joined and installed view {sent_in}, the view of the send, and "
    elif join is not None and q != p:
        a, b = _when(_Clocks(*join.clocks), _Clocks(*clk), reading)
        since = f"joined at {a}, before the send at {b}, and "
    else:
        since = ""
    text = (f"{p} sends {m} and stays correct; {q} {since}stays correct, "
            f"but never delivers {m}.")
    return Result(NAME, clean.trace, Verdict.VIOLATED, wit, text, "never-delivered", done)


def _a_reading(value: str) -> str | None:
    return None if value in READINGS else f"must be one of {', '.join(READINGS)}, got {value!r}"


OPTIONS = (
    Option("liveness_reading", str, "when a joiner is owed a message: 'real-time' (its "
           "join_OK before the send, 003 Definition 2.1) or 'slot' (its join slot <= the "
           "send's)", "READING", default=READINGS[0], validate=_a_reading, selects=False),
)

PROPERTY = Property(NAME, "a message of a sender that stays correct is delivered by every "
                    "process that joined before it was sent and stays correct", False,
                    check, detect, __doc__, lambda c, ti, o: NO_SENDS, options=OPTIONS,
                    stream=stream, held=False, at_end=True)
