"""The rate property against the reservations a trace declares (003 section 2.1's join(r)
and RN(r), ``negotiate`` records; issue 29 part 2): a source over its max' in one slot,
over its avg' in K slots, over its old reservation after a renegotiation takes effect and
within it before; a new contract at a rejoin; bad declarations named by line and field;
clean simulated traces, through the exact check, the chunk's view, the vectorized
detection and ``tomkit check --guarantee qos``."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from tomkit.checker.chunk import Chunk, Piece
from tomkit.checker.properties import EXACT, Options, resolve
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.cli import main
from tomkit.model.sim import SimConfig, simulate
from tomkit.traces.schema import ARROW_SCHEMA

EXTRA = [pa.field("x_slot", pa.int64()), pa.field("x_join", pa.bool_()),
         pa.field("x_rate_max", pa.float64()), pa.field("x_rate_avg", pa.float64()),
         pa.field("x_rate_window", pa.int64()), pa.field("x_rn", pa.bool_())]


def negotiate(p, slot, most=None, avg=None, window=None, rn=False):
    r = {"trace": "t", "process": p, "kind": "negotiate", "x_slot": slot, "x_rn": rn}
    for k, v in (("x_rate_max", most), ("x_rate_avg", avg), ("x_rate_window", window)):
        if v is not None:
            r[k] = v
    return r


def packets(p, slot, k):
    return [{"trace": "t", "process": p, "kind": "packet", "x_slot": slot}] * k


def check(records, options=Options()):
    """The exact verdict, after asserting the chunk's view agrees and the detection sends
    a declaring trace to the exact check."""
    prop = resolve("rate")
    res = prop.check(Trace.from_records(records, source="test.jsonl"), options)
    rows = [{f.name: r.get(f.name) for f in [*ARROW_SCHEMA, *EXTRA]} for r in records]
    piece = Piece(pa.Table.from_pylist(rows, schema=pa.schema([*ARROW_SCHEMA, *EXTRA])),
                  np.arange(1, len(records) + 1), "test.jsonl", "jsonl")
    c = Chunk.build([piece])
    if any(r["kind"] == "negotiate" for r in records):
        assert int(prop.detect(c, options)[0]) == EXACT
    again = prop.check(c.trace(0), options)
    assert again.verdict == res.verdict
    assert [w.describe() for w in again.witness] == [w.describe() for w in res.witness]
    return res


def test_within_the_declared_reservation_holds_without_any_option():
    recs = [negotiate("p", 0, most=4, avg=10, window=3), *packets("p", 0, 4),
            *packets("p", 1, 3), *packets("p", 2, 3), *packets("p", 3, 4)]
    assert check(recs).verdict == Verdict.HOLDS


def test_a_source_over_its_max_in_one_slot():
    recs = [negotiate("p", 0, most=4.5, avg=100, window=3), *packets("p", 0, 4),
            *packets("p", 1, 5)]
    res = check(recs)
    assert res.verdict == Verdict.VIOLATED and res.clause == "max-per-slot"
    assert "5 network messages in slot 1, over the 4.5 per slot it declared from slot 0" \
        in res.explanation
    assert len(res.witness) == 1 + 5  # the declaration and max + 1 packets


def test_a_source_over_its_avg_in_k_slots():
    recs = [negotiate("p", 0, most=4, avg=10, window=3), *packets("p", 0, 4),
            *packets("p", 1, 4), *packets("p", 2, 3)]
    res = check(recs)
    assert res.verdict == Verdict.VIOLATED and res.clause == "avg-per-window"
    assert "11 network messages in the 3 slots 0..2, over the 10 per 3 slots" in \
        res.explanation
    # the same packets spread over 4 slots: every window holds at most 10
    spread = [negotiate("p", 0, most=4, avg=10, window=3), *packets("p", 0, 4),
              *packets("p", 1, 4), *packets("p", 3, 3)]
    assert check(spread).verdict == Verdict.HOLDS


def test_over_the_old_reservation_after_rn_takes_effect_and_within_it_before():
    before = [negotiate("p", 0, most=6, avg=100, window=3),
              negotiate("p", 3, most=2, avg=100, window=3, rn=True),
              *packets("p", 2, 6), *packets("p", 3, 2)]
    assert check(before).verdict == Verdict.HOLDS  # slot 2 is under the old max
    after = [*before, *packets("p", 4, 6)]
    res = check(after)
    assert res.verdict == Verdict.VIOLATED and "slot 4, over the 2 per slot it declared " \
        "from slot 3" in res.explanation
    # a window across the change is judged against the larger avg' in force in it
    avg = [negotiate("p", 0, most=9, avg=12, window=3),
           negotiate("p", 2, most=9, avg=4, window=3, rn=True),
           *packets("p", 0, 8), *packets("p", 2, 4)]
    assert check(avg).verdict == Verdict.HOLDS
    res = check([*avg, *packets("p", 3, 1)])  # slots 2..4 hold 5 > 4
    assert res.verdict == Verdict.VIOLATED and "slots 2..4" in res.explanation


def test_a_rejoin_starts_a_new_contract():
    recs = [negotiate("p", 0, most=9, avg=10, window=4), *packets("p", 0, 9),
            negotiate("p", 2, most=9, avg=10, window=4), *packets("p", 2, 9)]
    assert check(recs).verdict == Verdict.HOLDS
    renegotiated = [{**r, "x_rn": True} if r["kind"] == "negotiate" and r["x_slot"] == 2
                    else r for r in recs]
    assert check(renegotiated).verdict == Verdict.VIOLATED  # 18 in slots 0..3


def test_declared_processes_override_the_options_the_others_keep_them():
    recs = [negotiate("p", 0, most=8), *packets("p", 0, 8), *packets("q", 0, 5)]
    assert check(recs, Options(rate_max=5)).verdict == Verdict.HOLDS
    res = check([*recs, *packets("q", 1, 6)], Options(rate_max=5))
    assert res.verdict == Verdict.VIOLATED and res.explanation.startswith("q sends 6")
    assert check([*recs, *packets("q", 1, 6)]).verdict == Verdict.HOLDS  # q: no reservation


@pytest.mark.parametrize("bad,field", [
    ({"x_slot": None}, "x_slot"),
    ({"x_rate_max": None}, "x_rate_max"),
    ({"x_rate_window": None, "x_rate_avg": 3}, "x_rate_window"),
    ({"x_rate_max": -1}, "x_rate_max"),
])
def test_a_bad_declaration_is_unknown_naming_line_and_field(bad, field):
    rec = {**negotiate("p", 0, most=4), **bad}
    rec = {k: v for k, v in rec.items() if v is not None}
    res = check([*packets("p", 0, 2), rec])
    assert res.verdict == Verdict.UNKNOWN
    assert res.explanation.startswith(f"a bad negotiate record: test.jsonl:3: field {field}")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulated_runs_with_reservations_hold_and_the_unshaped_variant_does_not(
        tmp_path, capsys, seed):
    def run(variant=None):
        options = {"reserve": "20/4", "packets": True, **({"variant": variant} if variant
                                                           else {})}
        return simulate(SimConfig(protocol="qos", n=4, rate=60.0, messages=200, seed=seed,
                                  options=options, joins=[("p3", 0.3)],
                                  renegotiations=[("p0", 0.55, (6, 1))])).records

    clean = run()
    assert check(clean).verdict == Verdict.HOLDS
    assert check(run("unshaped")).verdict == Verdict.VIOLATED
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in clean))
    # the guarantee judges rates by the declarations: no --rate-max needed
    assert main(["check", str(path), "--guarantee", "qos", "--format", "json"]) == 0
    counts = json.loads(capsys.readouterr().out)["summary"]["counts"]
    assert counts["rate"] == {"holds": 1, "unknown": 0, "violated": 0}
    assert counts["member-liveness"]["holds"] == 1


def _walked(steps, by_slot):
    """The windowed part of the declared check as first written: every window start from
    the lowest that reaches a used slot, every slot of each window (the literal reading
    that the breakpoint search must equal)."""
    from tomkit.checker.properties.rate import in_force

    lo, hi = min(by_slot), max(by_slot)
    for w in range(lo - max((d.window or 1) for d in steps) + 1, hi + 1):
        d = in_force(steps, w)
        if d is None or d.avg is None or d.window is None:
            continue
        mine = [t for t in range(w, w + d.window)
                if (x := in_force(steps, t)) is not None and x.contract == d.contract]
        limit = max(x.avg for t in mine if (x := in_force(steps, t)) is not None
                    and x.avg is not None)
        window = [e for t in mine for e in by_slot.get(t, ())]
        if len(window) > limit:
            return w, len(window), limit
    return None


def test_the_declared_windows_are_judged_as_a_walk_of_every_slot_would():
    """Seeded random declarations (renegotiations, new contracts, windows 1-6) and packets:
    the first window over its limit and its count, as the literal walk finds them."""
    import random
    import re

    from tomkit.checker.properties.rate import _judge_declared, declarations

    rng = random.Random(29)
    over = 0
    for _ in range(300):
        recs = []
        for s in sorted(rng.sample(range(12), rng.randint(1, 3))):
            recs.append(negotiate("p", s, avg=rng.choice([1, 2, 3, 4.5]),
                                  window=rng.randint(1, 6), rn=rng.random() < 0.5))
        for s in range(rng.randint(0, 3), rng.randint(4, 16)):
            recs += packets("p", s, rng.choice([0, 0, 1, 1, 2, 3]))
        trace = Trace.from_records(recs, source="t.jsonl")
        evs = trace.events["p"]
        steps = declarations(evs)
        by_slot = {}
        for e in evs:
            if e.kind == "packet":
                by_slot.setdefault(e.slot, []).append(e)
        if not by_slot:
            continue
        want = _walked(steps, by_slot)
        got = _judge_declared("p", steps, by_slot, "t", {})
        if want is None:
            assert got is None, got.explanation
            continue
        over += 1
        w, n, limit = want
        assert got is not None and got.clause == "avg-per-window"
        assert re.search(rf"sends {n} network messages in the \d+ slots {w}\.\.", got.explanation)
        assert f"over the {limit:g} per" in got.explanation
    assert over > 50  # the search met many windows over their limit, not only clean ones


def test_a_window_of_a_billion_slots_is_judged_at_once():
    recs = [negotiate("p", 0, avg=2, window=10**9), *packets("p", 0, 1),
            *packets("p", 5 * 10**8, 2)]
    res = check(recs)
    assert res.verdict == Verdict.VIOLATED
    assert f"sends 3 network messages in the {10**9} slots" in res.explanation
