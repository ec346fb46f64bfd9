"""Tests of ``tomkit prove --protocol`` (fuzz/prove/timestamps/state.py, ts_invariant.py,
ts_solve.py, ts_bmc.py, ts_replay.py): ABCAST and TOMP are proved for small n; every
conjunct of the invariant is needed; every broken variant is refuted by a run the model
reproduces and whose trace ``tomkit check`` rejects; a run the model does not reproduce
is an internal error; the encoding agrees with the model on random runs."""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import replace

import pytest
import z3

from tomkit.cli import main
from tomkit.cli import prove as prove_cli
from tomkit.fuzz.counterexample import ReplayMismatch
from tomkit.fuzz.prove.timestamps import solve as ts_solve
from tomkit.fuzz.prove.timestamps.bmc import HostSnapshot, bmc, min_steps
from tomkit.fuzz.prove.timestamps.invariant import CONJUNCTS, bounds_grow, invariant, safety
from tomkit.fuzz.prove.timestamps.replay import (
    Driver,
    concrete_state,
    trace_records,
    validate,
    write_run,
)
from tomkit.fuzz.prove.timestamps.state import (
    KINDS,
    VARIANTS,
    Spec,
    and_,
    deliver_all,
    fresh_state,
    not_,
    successor,
    truth,
)

BROKEN = [(p, v) for p in ("abcast", "tomp") for v in VARIANTS[p]]


def run_cli(*argv: str) -> int:
    p = argparse.ArgumentParser()
    prove_cli.add_parser(p.add_subparsers())
    args = p.parse_args(["prove", *argv])
    return args.func(args)


@pytest.mark.parametrize("protocol", ["abcast", "tomp"])
@pytest.mark.parametrize("n", [2, 3])
def test_the_protocols_are_proved_for_small_n(protocol, n):
    o = ts_solve.prove_protocol(protocol, n)
    assert o.status == "proved", o.line()
    assert [q.name for q in o.queries] == ["base", *KINDS, "safety", "order"]
    assert all(q.status == "proved" for q in o.queries), o.line()
    assert o.search is None


@pytest.mark.parametrize("protocol", ["abcast", "tomp"])
def test_every_conjunct_is_needed(protocol):
    """Without any one conjunct the rest is no longer inductive, or no longer implies
    safety: the invariant states nothing idle (n = 2; the steps and safety as proved)."""
    spec = Spec(protocol, 2, ts_solve.STEP_SLOTS)

    def holds(drop: str) -> bool:
        s = fresh_state(spec, "s")
        pre = [f for name, f in invariant(s) if name != drop]
        sv = z3.Solver()
        sv.add(*pre, not_(safety(s)))
        if sv.check() != z3.unsat:
            return False
        for kind in KINDS:
            s = fresh_state(spec, "s")
            h, j = z3.Int("h"), z3.Int("j")
            guard, t = successor(s, kind, h=h, x=0, j=j)
            post = [f for name, f in invariant(t) if name != drop] + [bounds_grow(s, t)]
            sv = z3.Solver()
            sv.add(h >= 0, h < 2, j >= 0, j < 2, guard,
                   *[f for name, f in invariant(s) if name != drop], not_(and_(*post)))
            if sv.check() != z3.unsat:
                return False
        return True

    assert holds("nothing")  # the full invariant, as a control
    for name in CONJUNCTS[protocol]:
        assert not holds(name), f"{protocol}: {name} is not needed"


def _rejected(trace, capsys) -> None:
    code = main(["check", str(trace), "-p", "total-order-weak,total-order-strong"])
    report = capsys.readouterr().out
    assert code == 1
    assert "total-order-strong  VIOLATED" in report


def test_the_command_refutes_a_variant_with_a_replayed_run(tmp_path, capsys):
    """The command refutes the variant at n = 2 with a run it replayed on the model (an
    internal error otherwise), as short as possible, whose trace ``tomkit check``
    rejects."""
    protocol, variant = "tomp", "raise-all"
    code = run_cli("--protocol", protocol, "--variant", variant, "--n", "2",
                   "--out", str(tmp_path))
    out = capsys.readouterr().out
    assert code == 1, out
    assert "counterexample" in out and "not inductive" in out
    steps = int(re.search(r"\((\d+) steps, 2 messages\)", out).group(1))
    assert steps == min_steps(Spec(protocol, 2, 2, variant))  # ts_bmc's lower bound
    text = (tmp_path / f"{protocol}-{variant}-n2.txt").read_text()
    assert f"a run of {steps} steps" in text and "total order (gap-free) violated" in text
    _rejected(tmp_path / f"{protocol}-{variant}-n2.jsonl", capsys)


#: each broken variant and the conjunct its failing step breaks
BREAKS = [
    ("abcast", "literal-counter", "counter-above-final"),
    ("abcast", "deliver-ud", "dl-iff-final"),
    ("abcast", "ignore-head", "delivered-below-queue"),
    ("tomp", "literal-counter", "counter-above-final"),
    ("tomp", "deliver-ud", "dl-iff-final"),
    ("tomp", "ignore-head", "delivered-below-queue"),
    ("tomp", "raise-all", "ud-below-final"),
]


def test_every_variant_is_covered():
    assert sorted((p, v) for p, v, _ in BREAKS) == sorted(BROKEN)


@pytest.mark.parametrize("protocol,variant,conjunct", BREAKS)
def test_every_broken_variant_is_refuted_by_a_replayed_run(protocol, variant, conjunct,
                                                          tmp_path, capsys):
    """At n = 2: exactly one step fails, breaking the conjunct the variant is about (base
    and safety still hold: the invariant is the same); the search finds a shortest run,
    which the model reproduces, and whose trace ``tomkit check`` rejects."""
    o = ts_solve.prove_protocol(protocol, 2, variant)
    assert o.status == "counterexample", o.line()
    failed = [q for q in o.queries if q.status == "failed" and q.name in KINDS]
    assert len(failed) == 1 and conjunct in failed[0].broken, o.line()
    assert {q.name for q in o.queries if q.status == "proved"} >= {"base", "safety"}
    run = o.search.run
    assert len(run.steps) == min_steps(Spec(protocol, 2, 2, variant))
    files = write_run(run, tmp_path, "cx")  # replays it: ReplayMismatch otherwise
    _rejected(files["trace"], capsys)


def test_a_variant_is_refuted_at_n_3_too():
    r = bmc("tomp", 3, "raise-all")
    assert r.status == "counterexample" and len(r.run.steps) == 11
    validate(r.run)


def test_the_search_finds_nothing_in_the_correct_protocols():
    for protocol in ("abcast", "tomp"):
        r = bmc(protocol, 2, None, max_steps=min_steps(Spec(protocol, 2, 2)) + 1)
        assert r.status == "none" and r.run is None, r
    # below the lower bound nothing is even tried
    r = bmc("abcast", 2, "literal-counter", max_steps=min_steps(Spec("abcast", 2, 2)) - 1)
    assert r.status == "none" and r.per_depth == []


def test_a_run_that_does_not_replay_is_an_internal_error(monkeypatch, capsys):
    run = bmc("abcast", 2, "literal-counter").run
    validate(run)
    # Z3 claiming another counter
    snap = run.snapshots[1]
    h0 = snap.hosts[0]
    wrong = replace(snap, hosts=(HostSnapshot(h0.counter + 1, h0.next_mid, h0.entries),
                                 *snap.hosts[1:]))
    with pytest.raises(ReplayMismatch, match="counter"):
        validate(replace(run, snapshots=(run.snapshots[0], wrong, *run.snapshots[2:])))
    # a step at another host: the model refuses it or ends elsewhere
    i = next(k for k, s in enumerate(run.steps) if s.kind == "data")
    moved = replace(run.steps[i], host=1 - run.steps[i].host)
    with pytest.raises(ReplayMismatch):
        validate(replace(run, steps=(*run.steps[:i], moved, *run.steps[i + 1:])))
    # a delivery Z3 did not make
    k = next(k for k, s in enumerate(run.steps) if s.delivered)
    quiet = replace(run.steps[k], delivered=())
    with pytest.raises(ReplayMismatch, match="delivers"):
        validate(replace(run, steps=(*run.steps[:k], quiet, *run.steps[k + 1:])))
    # a violation that is not there
    a, b, x, y = run.violation
    with pytest.raises(ReplayMismatch, match="does not deliver"):
        validate(replace(run, violation=(a, b, y, x)))
    # and the command says so
    bad = replace(run, violation=(a, b, y, x))
    real = ts_solve.bmc

    def fake(*args, **kw):
        r = real(*args, **kw)
        r.run = bad
        return r

    monkeypatch.setattr(ts_solve, "bmc", fake)
    assert run_cli("--protocol", "abcast", "--variant", "literal-counter", "--n", "2") == 2
    assert "INTERNAL ERROR" in capsys.readouterr().err


# ------------------------------------------------------ the encoding against the model


def _random_run(protocol: str, variant: str | None, n: int, msgs, rng: random.Random,
                check) -> int:
    """Drive the model with random inputs; ``check(kind, pre, post, args)`` after each.
    Returns the number of inputs."""
    d = Driver(protocol, n, variant)
    mids = [m for m, _, _ in msgs]
    sent: set[str] = set()
    steps = 0
    while True:
        todo = []
        for m, k, q in msgs:
            if m not in sent and all(o in sent for o, k2, q2 in msgs if k2 == k and q2 < q):
                todo.append(("multicast", k, m))
                break  # multicasts in list order keep every sender's ids increasing
        for h in range(n):
            for m, k, q in msgs:
                if m in d.data and (m, h) not in d.acks:
                    if protocol == "tomp" and d.procs[h].next_mid[k] != q:
                        continue
                    todo.append(("data", h, m))
        todo += [("ack", j, m) for (m, j) in d.acks if (m, j) not in d.collected]
        todo += [("final", h, m) for m in d.finals for h in range(n)
                 if (h, m) not in d.final_rcv]
        if not todo:
            return steps
        kind, h, m = rng.choice(todo)
        pre = concrete_state(d, msgs, order=True)
        if kind == "multicast":
            d.multicast(h, m)
            sent.add(m)
        elif kind == "data":
            d.receive_data(h, m)
        elif kind == "ack":
            d.collect_ack(m, h)
        else:
            d.receive_final(h, m)
        steps += 1
        check(kind, pre, concrete_state(d, msgs, order=True), (h, mids.index(m)))


FIELDS = ("bc", "sent", "c", "nm", "st", "tc", "ti", "frcv", "pc", "acol", "anm", "ndel",
          "dpos")


@pytest.mark.parametrize("protocol,variant",
                         [("abcast", None), ("tomp", None), *BROKEN])
def test_the_transitions_are_the_models_steps(protocol, variant):
    """On random runs of the model (4 messages, 3 hosts, several seeds), each input is
    the encoding's transition, followed by the deliveries the model makes at once; for
    the protocols as specified, every state reached satisfies the invariant and safety,
    and no lower bound decreases."""
    msgs = [("p0.1", 0, 1), ("p1.1", 1, 1), ("p0.2", 0, 2), ("p2.1", 2, 1)]
    checked = []

    def check(kind, pre, post, args):
        h, x = args
        if kind == "ack":
            guard, t = successor(pre, "ack", x=x, j=h)
        else:
            guard, t = successor(pre, kind, h=h, x=x)
            if kind in ("data", "final"):
                t = deliver_all(t, h)
        assert truth(guard), (kind, args)
        for f in FIELDS:
            assert getattr(t, f) == getattr(post, f), (kind, args, f)
        if variant is None:
            assert truth(and_(*[g for _, g in invariant(pre)]))
            assert truth(safety(pre)) and truth(bounds_grow(pre, post))
        checked.append(kind)

    for seed in range(6):
        _random_run(protocol, variant, 3, msgs, random.Random(seed), check)
    assert set(checked) == {"multicast", "data", "ack", "final"}
    assert len(checked) >= 6 * (4 + 3 * 4 * 3)


def test_a_broken_variant_leaves_the_invariant_on_some_random_run():
    """The invariant is not a tautology of the encoding: the literal counter breaks it
    on a run of the model."""
    msgs = [("p0.1", 0, 1), ("p1.1", 1, 1), ("p2.1", 2, 1)]
    broke = []

    def check(kind, pre, post, args):
        if not truth(and_(*[g for _, g in invariant(post)])):
            broke.append(kind)

    for seed in range(20):
        _random_run("abcast", "literal-counter", 3, msgs, random.Random(seed), check)
    assert "final" in broke


# ------------------------------------------------------------------------------ CLI


def test_cli_lines_and_exit_codes(capsys):
    assert run_cli("--protocol", "abcast", "--n", "2-3") == 0
    out = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0] for ln in out] == ["abcast n=2", "abcast n=3"]
    assert all("proved" in ln and "safety proved" in ln for ln in out)
    assert run_cli("--protocol", "tomp", "--n", "3", "--timeout", "0.001") == 3
    assert "unknown" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["toto", "--protocol", "abcast"], "not both"),
    (["--protocol", "abcast", "--variant", "raise-all"], "no variant"),
    (["--protocol", "tomp", "--delta", "2"], "--delta"),
    (["--protocol", "tomp", "--k", "2"], "--k"),
    (["--protocol", "tomp", "--n", "1"], "n >= 2"),
    (["--variant", "deliver-ud", "toto", "--n", "3"], "--variant"),
    (["toto"], "--n is required"),
    ([], "give a RULE"),
])
def test_cli_bad_input(argv, message, capsys):
    assert run_cli(*argv) == 2
    assert message in capsys.readouterr().err


def test_the_trace_is_the_replayed_run():
    run = bmc("tomp", 2, "literal-counter").run
    recs = trace_records(run)
    assert {r["kind"] for r in recs} == {"send", "recv", "deliver"}
    sends = [r for r in recs if r["kind"] == "send"]
    assert [r["msg"] for r in sends] == [s.msg for s in run.steps if s.kind == "multicast"]
    assert all("deps" in r for r in sends)
    assert all(r["x_final_ts"].count(".") == 1 for r in recs if r["kind"] == "deliver")
    # the run's own steps first, then the drain: every host delivers every message
    by_host = {}
    for r in recs:
        if r["kind"] == "deliver":
            by_host.setdefault(r["process"], []).append(r["msg"])
    assert all(sorted(v) == sorted(m for m, _, _ in run.messages) for v in by_host.values())
    # written as the simulator writes runs, so the replayer takes it: it conforms
    from tomkit.model.conform import replay

    reports = replay(recs, "tomp", {"variant": "literal-counter"})
    assert all(not r.differences for r in reports.values())
