"""Runs of ABCAST and TOMP on the model: a Z3 run (``ts_bmc.py``) replayed on
``AbcastProcess`` / ``TompProcess`` with the variant's arguments, checked step by step
against what Z3 claimed, and written as a v1 trace and a text.

:func:`validate` raises :class:`~tomkit.fuzz.counterexample.ReplayMismatch` unless every
step is accepted by the model, leaves every host with the counter, next_mid, queue
(labels and timestamps) and deliveries Z3 says, produces the validation messages
(final timestamp, TOMP's vectors) Z3 says, and the run ends with the claimed violation
of total order. So the encoding is checked on every answer.

:class:`Driver` carries the messages between the processes (any order the run gives:
the processes accept any, TOMP's data in sequence) and keeps what the model does not
show: every ack sent (its proposal and next_mid copy), which ones the emitters
collected, which validation messages each host received. :func:`concrete_state` maps
that onto the symbolic state of ``timestamps.py``, which tests use to check the
transitions and the invariant on random runs of the model.

Trace records (v1, one trace; ``tomkit check`` rejects it as total-order-strong, and
-weak when the two hosts deliver both messages): what the simulator writes for the same
inputs (``model/recorder.py``; the processes log them, model/abcast/abcast.py's docstring):
``send`` with ``deps``, ``recv`` of data and of the acknowledgements and validation
messages (``x_packet``), ``deliver`` with ``x_final_ts`` (the timestamp the model
delivered with; under ``deliver-ud`` a proposal, not a final timestamp). ``time`` is the
step of the run (the text's numbering). So ``tomkit conform --protocol`` replays it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tomkit.fuzz.counterexample import ReplayMismatch
from tomkit.fuzz.prove.timestamps.bmc import Run, RunStep, Snapshot
from tomkit.fuzz.prove.timestamps.state import DL, DONE, NONE, UD, Spec, SymState
from tomkit.model.abcast.abcast import AbcastProcess, Ack, Data, Final
from tomkit.model.process import Output
from tomkit.model.protocols import PROTOCOLS
from tomkit.model.recorder import Recorder

__all__ = ["Driver", "concrete_state", "explain", "trace_records", "validate", "write_run"]

@dataclass
class Driver:
    """n processes of ``protocol`` with the variant's arguments, driven through the common
    process interface (``model/process.py``), and the messages between them (module
    docstring). Methods return the ids the process delivered; the model's ValueError (an
    input it refuses) propagates. ``rec`` holds the trace, as the simulator writes it."""

    protocol: str
    n: int
    variant: str | None = None
    procs: list[AbcastProcess] = field(init=False)
    rec: Recorder = field(init=False)
    data: dict[str, Data] = field(default_factory=dict)
    acks: dict[tuple[str, int], Ack] = field(default_factory=dict)
    collected: set[tuple[str, int]] = field(default_factory=set)
    finals: dict[str, Final] = field(default_factory=dict)
    final_rcv: set[tuple[int, str]] = field(default_factory=set)
    step_no: int = 0

    def __post_init__(self) -> None:
        opts = {"variant": self.variant}
        names = [f"p{h}" for h in range(self.n)]
        self.procs = PROTOCOLS[self.protocol].make(names, opts, 1.0)  # type: ignore[assignment]
        self.rec = Recorder(f"prove-{self._name()}-n{self.n}", names)

    @property
    def records(self) -> list[dict]:
        return self.rec.records

    def _name(self) -> str:
        return self.protocol + (f"-{self.variant}" if self.variant else "")

    def _input(self, h: int, packet: Data | Ack | Final) -> Output:
        out = self.procs[h].on_receive(packet, float(self.step_no))
        self.rec.logged(h, out, float(self.step_no))
        return out

    def multicast(self, h: int, mid: str) -> list[str]:
        out = self.procs[h].on_send(mid, float(self.step_no))
        self.rec.sent(h, mid, out, float(self.step_no))
        (send,) = out.sends
        assert isinstance(send.packet, Data)
        self.data[mid] = send.packet
        return [m for m, _ in out.delivered]

    def receive_data(self, h: int, mid: str) -> list[str]:
        if mid not in self.data:
            raise ValueError(f"p{h} receives {mid}, which was not multicast")
        out = self._input(h, self.data[mid])
        (send,) = out.sends
        assert isinstance(send.packet, Ack)
        self.acks[mid, h] = send.packet
        return [m for m, _ in out.delivered]

    def collect_ack(self, mid: str, j: int) -> list[str]:
        if (mid, j) not in self.acks or (mid, j) in self.collected:
            raise ValueError(f"no ack of {mid} from p{j} in flight")
        a = self.acks[mid, j]
        out = self._input(a.sender, a)
        self.collected.add((mid, j))
        for s in out.sends:
            assert isinstance(s.packet, Final)
            self.finals[mid] = s.packet
        return [m for m, _ in out.delivered]

    def receive_final(self, h: int, mid: str) -> list[str]:
        if mid not in self.finals or (h, mid) in self.final_rcv:
            raise ValueError(f"no validation message of {mid} in flight to p{h}")
        self.final_rcv.add((h, mid))
        return [m for m, _ in self._input(h, self.finals[mid]).delivered]

    def drain(self, mids: list[str]) -> list[RunStep]:
        """Receive everything still in flight, in a fixed order (hosts, then ``mids``,
        data before validation messages), until nothing is: the run completed by the
        model alone. Returns the steps taken, with their deliveries."""
        out: list[RunStep] = []
        while True:
            todo = [("data", h, m) for h in range(self.n) for m in mids
                    if m in self.data and (m, h) not in self.acks]
            todo += [("final", h, m) for h in range(self.n) for m in mids
                     if m in self.finals and (h, m) not in self.final_rcv]
            if not todo:
                return out
            kind, h, m = todo[0]
            self.step_no += 1
            if kind == "data":
                got = self.receive_data(h, m)
                self.collect_ack(m, h)
            else:
                got = self.receive_final(h, m)
            out.append(RunStep(kind, h, m, tuple(got)))

    def entries(self, h: int) -> dict[str, tuple[str, tuple[int, int]]]:
        """What h holds: per message received, (label, (counter, host))."""
        p = self.procs[h]
        out = {d.mid: ("done", (d.ts.counter, d.ts.host)) for d in p.delivered}
        out.update({e.mid: (e.state, (e.ts.counter, e.ts.host)) for e in p.queue})
        return out


# ------------------------------------------------------------------------------ replay


def _apply(d: Driver, step: RunStep, sender: dict[str, int]) -> list[str]:
    """One step of a run on the driver; returns the model's deliveries."""
    if step.kind == "multicast":
        if sender[step.msg] != step.host:
            raise ReplayMismatch(f"{step}: {step.msg} is p{sender[step.msg]}'s")
        return d.multicast(step.host, step.msg)
    if step.kind == "data":
        out = d.receive_data(step.host, step.msg)
        d.collect_ack(step.msg, step.host)
        return out
    if step.kind == "final":
        return d.receive_final(step.host, step.msg)
    raise ReplayMismatch(f"unknown step kind {step.kind!r}")


def _compare(d: Driver, run: Run, i: int, snap: Snapshot) -> None:
    where = f"{run.name} n={run.n}, after step {i + 1} ({run.steps[i]})"
    for h, hs in enumerate(snap.hosts):
        p = d.procs[h]
        if p.counter != hs.counter:
            raise ReplayMismatch(f"{where}: p{h}'s counter is {p.counter}, Z3 says "
                                 f"{hs.counter}")
        for k, v in hs.next_mid.items():
            got = p.next_mid[k]  # type: ignore[attr-defined]
            if got != v:
                raise ReplayMismatch(f"{where}: p{h}'s next_mid(p{k}) is {got}, Z3 says {v}")
        if d.entries(h) != hs.entries:
            raise ReplayMismatch(f"{where}: p{h} holds {d.entries(h)}, Z3 says {hs.entries}")
    if set(d.finals) != set(snap.finals):
        raise ReplayMismatch(f"{where}: decided {sorted(d.finals)}, Z3 says "
                             f"{sorted(snap.finals)}")
    for mid, (ts, mnm, mnt) in snap.finals.items():
        f = d.finals[mid]
        if (f.ts.counter, f.ts.host) != ts:
            raise ReplayMismatch(f"{where}: the final timestamp of {mid} is {f.ts}, Z3 says "
                                 f"{ts}")
        for k, v in mnm.items():
            assert f.min_next_mid is not None and f.max_next_ts is not None
            t = f.max_next_ts[k]
            if f.min_next_mid[k] != v or (t.counter, t.host) != mnt[k]:
                raise ReplayMismatch(
                    f"{where}: {mid}'s min_next_mid(p{k}), max_next_ts(p{k}) are "
                    f"{f.min_next_mid[k]}, {t}; Z3 says {v}, {mnt[k]}")


def _conflict(d: Driver, a: int, b: int, x: str, y: str) -> bool:
    """a delivered x before y, b delivered y without x before it."""
    sa = [m.mid for m in d.procs[a].delivered]
    sb = [m.mid for m in d.procs[b].delivered]
    return (x in sa and y in sa and sa.index(x) < sa.index(y) and y in sb
            and (x not in sb or sb.index(y) < sb.index(x)))


def validate(run: Run) -> Driver:
    """Replay ``run`` on the model and check it (module docstring); returns the driver,
    whose records are the run's trace."""
    sender = {mid: k for mid, k, _ in run.messages}
    d = Driver(run.protocol, run.n, run.variant)
    for i, (step, snap) in enumerate(zip(run.steps, run.snapshots)):
        d.step_no = i + 1
        try:
            got = _apply(d, step, sender)
        except (ValueError, AssertionError) as e:
            raise ReplayMismatch(f"{run.name} n={run.n}, step {i + 1} ({step}): the model "
                                 f"refuses it: {e}") from e
        if tuple(got) != step.delivered:
            raise ReplayMismatch(f"{run.name} n={run.n}, step {i + 1} ({step}): the model "
                                 f"delivers {got}, Z3 says {list(step.delivered)}")
        _compare(d, run, i, snap)
    if len(run.steps) != len(run.snapshots):
        raise ReplayMismatch(f"{run.name}: {len(run.steps)} steps, "
                             f"{len(run.snapshots)} states")
    a, b, x, y = run.violation
    if not _conflict(d, a, b, x, y):
        raise ReplayMismatch(f"{run.name} n={run.n}: after the replay p{a} does not deliver "
                             f"{x} before {y} with p{b} delivering {y} without {x} first")
    return d


def trace_records(run: Run) -> list[dict]:
    """The v1 records of the replayed run, completed by :meth:`Driver.drain` (module
    docstring)."""
    d = validate(run)
    d.drain([mid for mid, _, _ in run.messages])
    return d.records


def explain(run: Run) -> str:
    """The run as text: every step with what the model did (proposals, final timestamps
    and TOMP's vectors, raised timestamps, deliveries) and the queue of the host that
    acted, then the violation."""
    d = Driver(run.protocol, run.n, run.variant)
    lines = [f"{run.name}, n = {run.n}: a run of {len(run.steps)} steps found by Z3 "
             f"(bounded model checking from the initial state), replayed on the model"]
    for i, step in enumerate(run.steps):
        d.step_no = i + 1
        lines.append(f"{i + 1:3}. {step}")
        if step.kind == "data":
            d.receive_data(step.host, step.msg)
            a = d.acks[step.msg, step.host]
            extra = f", next_mid {list(a.next_mid)}" if a.next_mid is not None else ""
            lines.append(f"       proposes {a.ts}{extra}")
            decided = step.msg in d.finals
            d.collect_ack(step.msg, step.host)
            if not decided and step.msg in d.finals:
                f = d.finals[step.msg]
                vec = ""
                if f.min_next_mid is not None and f.max_next_ts is not None:
                    vec = (f"; min_next_mid {list(f.min_next_mid)}, max_next_ts "
                           f"{[str(t) for t in f.max_next_ts]}")
                lines.append(f"       p{f.sender} has every ack of {f.mid}: final "
                             f"timestamp {f.ts}{vec}")
        elif step.kind == "final":
            before = d.entries(step.host)
            d.receive_final(step.host, step.msg)
            after = d.entries(step.host)
            for mid, (lab, ts) in after.items():  # TOMP's anticipation (004 3.2.3.2)
                was = before.get(mid)
                if lab == "ud" and was is not None and was[0] == "ud" and was[1] != ts:
                    lines.append(f"       raises {mid} from {was[1][0]}.{was[1][1]} to "
                                 f"{ts[0]}.{ts[1]}")
        else:
            d.multicast(step.host, step.msg)
        if step.kind != "multicast":
            q = d.procs[step.host].figure_row()
            lines.append(f"       p{step.host}: counter {d.procs[step.host].counter}, "
                         + " ".join(f"{m}:{t}:{lab}" for m, t, lab in q))
    a, b, x, y = run.violation
    sa = [m.mid for m in d.procs[a].delivered]
    sb = [m.mid for m in d.procs[b].delivered]
    how = ("delivers it after" if x in sb else "has not delivered it")
    lines.append(f"p{a} delivers {', '.join(sa)}; p{b} delivers {', '.join(sb)}: p{a} "
                 f"delivers {x} before {y}, p{b} delivers {y} and {how}: total order "
                 "(gap-free) violated.")
    rest = d.drain([mid for mid, _, _ in run.messages])
    if rest:
        lines.append("Then the model alone (not Z3) receives everything still in flight, "
                     "in a fixed order; the trace has these steps too:")
        lines += [f"{len(run.steps) + i + 1:3}. {st}" for i, st in enumerate(rest)]
        lines += [f"  p{h} delivers {', '.join(m.mid for m in p.delivered)}"
                  for h, p in enumerate(d.procs)]
    return "\n".join(lines) + "\n"


def write_run(run: Run, out_dir: str | os.PathLike, stem: str) -> dict[str, str]:
    """Write the trace (.jsonl) and the text (.txt); returns their paths by kind."""
    from tomkit.traces.writer import write_records

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"trace": str(out / f"{stem}.jsonl"), "txt": str(out / f"{stem}.txt")}
    write_records(files["trace"], trace_records(run))
    Path(files["txt"]).write_text(explain(run))
    return files


# ------------------------------------------------------------------ concrete states


def concrete_state(d: Driver, messages: list[tuple[str, int, int]],
                   order: bool = False) -> SymState:
    """The driver's state as a :class:`SymState` of Python values over ``messages``
    (id, sender, identifier; multicast or not yet), for checking the encoding."""
    spec = Spec(d.protocol, d.n, len(messages), d.variant, order)
    tomp = spec.tomp
    H, M = range(d.n), range(len(messages))
    st = [[NONE] * len(messages) for _ in H]
    tc = [[0] * len(messages) for _ in H]
    ti = [[0] * len(messages) for _ in H]
    dpos = [[0] * len(messages) for _ in H]
    for h in H:
        ent = d.entries(h)
        pos = {x.mid: i for i, x in enumerate(d.procs[h].delivered)}
        for m, (mid, _, _) in enumerate(messages):
            if mid in ent:
                lab, (c, i) = ent[mid]
                st[h][m] = {"ud": UD, "dl": DL, "done": DONE}[lab]
                tc[h][m], ti[h][m] = c, i
                dpos[h][m] = pos.get(mid, 0)

    def ack(mid: str, j: int) -> Ack | None:
        return d.acks.get((mid, j))

    return SymState(
        spec=spec, used=[True for _ in M],
        snd=[k for _, k, _ in messages], sq=[q for _, _, q in messages],
        bc=[mid in d.data for mid, _, _ in messages],
        sent=[d.procs[k].sent for _, k, _ in messages],
        c=[d.procs[h].counter for h in H],
        nm=[[d.procs[h].next_mid[k] for _, k, _ in messages]  # type: ignore[attr-defined]
             if tomp else [] for h in H],
        st=st, tc=tc, ti=ti,
        frcv=[[(h, mid) in d.final_rcv for mid, _, _ in messages] for h in H],
        pc=[[a.ts.counter if (a := ack(mid, j)) else 0 for j in H] for mid, _, _ in messages],
        acol=[[(mid, j) in d.collected for j in H] for mid, _, _ in messages],
        anm=[[[a.next_mid[k] if (a := ack(mid, j)) and a.next_mid else 0
               for _, k, _ in messages] if tomp else [] for j in H] for mid, _, _ in messages],
        ndel=[len(d.procs[h].delivered) if order else 0 for h in H],
        dpos=dpos if order else [[0] * len(messages) for _ in H],
    )
