"""The properties of the QoS-preserving totally ordered multicast (Bar-Joseph, Keidar,
Anker and Lynch): member-liveness, realtime-latency and rate, each on planted violations of
every kind and on clean traces, through both engines; the qos guarantee profile; the
command-line options."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tracedsl import CODE
from tracedsl import parse as _parse

from tomkit.checker.chunk import Chunk, Piece
from tomkit.checker.profiles import builtin
from tomkit.checker.properties import EXACT, Options, properties, resolve
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.cli import main
from tomkit.traces.schema import ARROW_SCHEMA
from tomkit.traces.writer import write_records

QOS_NAMES = ("member-liveness", "realtime-latency", "rate")


def parse(text: str, trace: str = "t") -> list[dict]:
    """tracedsl's notation, with real_time as a number and x_slot as an integer."""
    out = _parse(text, trace)
    for r in out:
        if "real_time" in r:
            r["real_time"] = float(r["real_time"])
        if "x_slot" in r:
            r["x_slot"] = int(r["x_slot"])
        if "x_join" in r:
            r["x_join"] = r["x_join"] == "true"
    return out


def chunk_of(records: list[dict]) -> Chunk:
    schema = pa.schema(list(ARROW_SCHEMA) + [pa.field("x_slot", pa.int64()),
                                             pa.field("x_join", pa.bool_())])
    rows = [{**r, "x_slot": r.get("x_slot"), "x_join": r.get("x_join")} for r in records]
    piece = Piece(pa.Table.from_pylist(rows, schema=schema),
                  np.arange(1, len(records) + 1), "test.jsonl", "jsonl")
    return Chunk.build([piece])


def check(records: list[dict], name: str, options: Options = Options()):
    """The reference verdict, after asserting the vectorized engine agrees with it and
    the chunk's exact view gives the same verdict and witness."""
    prop = resolve(name)
    res = prop.check(Trace.from_records(records, source="test.jsonl"), options)
    c = chunk_of(records)
    code = int(prop.detect(c, options)[0])
    if code != EXACT:
        assert CODE[code] == res.verdict, (name, CODE[code], res)
    again = prop.check(c.trace(0), options)
    assert again.verdict == res.verdict
    assert [w.describe() for w in again.witness] == [w.describe() for w in res.witness]
    return res


def wit(res):
    return [w.describe().split("  [")[0] for w in res.witness]


# ---- member-liveness ---------------------------------------------------------------------

STATIC = """
    p send a time=0.01
    q send b time=0.02
    p deliver a time=0.1
    p deliver b time=0.11
    q deliver a time=0.1
    q deliver b time=0.11
"""


def test_member_liveness_static_clean_and_missing():
    assert check(parse(STATIC), "member-liveness").verdict == Verdict.HOLDS
    bad = parse(STATIC.replace("q deliver b time=0.11", ""))
    res = check(bad, "member-liveness")
    assert res.verdict == Verdict.VIOLATED and res.clause == "never-delivered"
    assert wit(res) == ["q: send b #0", "q: deliver a"]
    assert check(parse("p crash"), "member-liveness").verdict == Verdict.UNKNOWN


# a joiner r (join slot 2): owes what is sent from slot 2 on, not before
JOIN = """
    p send a time=0.05 x_slot=0
    r join time=0.2 x_slot=2
    p send b time=0.25 x_slot=2
    p deliver a time=0.1
    p deliver b time=0.3
    q deliver a time=0.1
    q deliver b time=0.3
    r deliver b time=0.3
"""


def test_member_liveness_joiner_owes_only_what_follows_its_join():
    assert check(parse(JOIN), "member-liveness").verdict == Verdict.HOLDS
    # today's liveness asks the joiner for the history: a false alarm for 003
    assert check(parse(JOIN), "liveness").verdict == Verdict.VIOLATED
    bad = parse(JOIN.replace("r deliver b time=0.3", ""))
    res = check(bad, "member-liveness")
    assert res.verdict == Verdict.VIOLATED
    assert wit(res) == ["p: send b #1", "r: join", "r: join"]
    assert "joined at slot 2, before the send at slot 2" in res.explanation


def test_member_liveness_join_order_by_clock_when_no_slot():
    # by local time: r joins at 0.2, a is sent at 0.15 (not owed), b at 0.25 (owed)
    recs = parse("""
        p send a time=0.15
        r join time=0.2
        p send b time=0.25
        p deliver a
        p deliver b
        r deliver b
    """)
    assert check(recs, "member-liveness").verdict == Verdict.HOLDS
    recs = [r for r in recs if not (r["process"] == "r" and r["kind"] == "deliver")]
    assert check(recs, "member-liveness").verdict == Verdict.VIOLATED
    # real time is read when local time is missing on one of them
    rt = parse("""
        p send a real_time=0.25
        r join real_time=0.2
        p deliver a
    """)
    assert check(rt, "member-liveness").verdict == Verdict.VIOLATED
    # no clock on both: undecidable, so unknown, never holds
    none = parse("""
        p send a
        r join
        p deliver a
    """)
    res = check(none, "member-liveness")
    assert res.verdict == Verdict.UNKNOWN and "cannot tell whether r joined" in res.explanation


CRASHES = """
    p send a time=0.05
    k send c time=0.06
    k crash time=0.07
    p deliver a time=0.1
    p deliver c time=0.1
    q deliver a time=0.1
    l send d time=0.08
    l leave time=0.09
    q deliver d time=0.1
"""


def test_member_liveness_exempts_faulty_senders_and_receivers():
    # c (crashed sender) reaches p and not q; d (a leaver's) reaches q only: both allowed,
    # and neither k nor l owes a
    recs = parse(CRASHES)
    assert check(recs, "member-liveness").verdict == Verdict.HOLDS
    assert check(recs, "agreement").verdict == Verdict.VIOLATED  # not promised by 003
    bad = parse(CRASHES.replace("q deliver a time=0.1", ""))
    res = check(bad, "member-liveness")
    assert res.verdict == Verdict.VIOLATED and wit(res)[0] == "p: send a #0"


def test_member_liveness_rejoin_judged_from_the_new_join():
    recs = parse("""
        p send a time=0.05
        q crash time=0.06
        q join time=0.3
        p send b time=0.35
        p send e time=0.01
        p deliver a
        p deliver b
        p deliver e
        q deliver b
    """)
    assert check(recs, "member-liveness").verdict == Verdict.HOLDS
    # a send before the sender's own crash and rejoin is owed to nobody
    recs2 = parse("""
        p send a time=0.05
        p crash time=0.06
        p join time=0.3
        p send b time=0.35
        p deliver b
        q deliver b
    """)
    assert check(recs2, "member-liveness").verdict == Verdict.HOLDS
    bad = [r for r in recs if not (r["process"] == "q" and r["kind"] == "deliver")]
    res = check(bad, "member-liveness")
    assert res.verdict == Verdict.VIOLATED and wit(res) == ["p: send b #1", "q: join",
                                                             "q: join"]


# a view-synchronous membership (Dolev, Kramer and Malki, section 5): r joins with view 2,
# at the instant p sends c still in view 1 (the same time: the clocks cannot order them)
VIEWS = """
    p view 1 members=p,q time=0
    q view 1 members=p,q time=0
    p send a time=0.1
    p deliver a time=0.15
    q deliver a time=0.15
    p send c time=0.2
    p deliver c time=0.2
    q deliver c time=0.2
    p view 2 members=p,q,r time=0.2
    q view 2 members=p,q,r time=0.2
    r join time=0.2
    r view 2 members=p,q,r time=0.2
    q send b time=0.3
    p deliver b time=0.35
    q deliver b time=0.35
    r deliver b time=0.35
"""


def test_member_liveness_judges_a_joiner_by_its_views():
    """With views, a joiner owes the messages of the views it installs after its join:
    c, sent in view 1 at the time of r's join, is not owed to r (by the clocks it would
    be: join.time <= send.time); b, sent in view 2, is."""
    recs = parse(VIEWS)
    assert check(recs, "member-liveness").verdict == Verdict.HOLDS
    by_clock = [r for r in recs if r["kind"] != "view"]
    res = check(by_clock, "member-liveness")
    assert res.verdict == Verdict.VIOLATED and wit(res)[0] == "p: send c #1"
    bad = parse(VIEWS.replace("r deliver b time=0.35", ""))
    res = check(bad, "member-liveness")
    assert res.verdict == Verdict.VIOLATED and res.clause == "never-delivered"
    assert wit(res) == ["q: send b #0", "r: join", "r: view 2", "r: view 2"]
    assert "r joined and installed view 2, the view of the send" in res.explanation
    # a joiner that has installed no view (yet) is judged by the clocks, which owe it c
    pending = parse(VIEWS.replace("r view 2 members=p,q,r time=0.2", ""))
    assert wit(check(pending, "member-liveness")) == ["p: send c #1", "r: join", "r: deliver b"]


# ---- realtime-latency --------------------------------------------------------------------

# the tight failure case of the reading aid (Delta 100 ms, delta 50 ms, eps 10 ms): the
# sender runs 5 ms fast, the receiver that times the crashed k out 5 ms slow
TIGHT = """
    i send m time=0.2 real_time=0.195
    k crash time=0.25 real_time=0.255
    j deliver m time=0.36 real_time=0.365
    i deliver m time=0.3 real_time=0.295
"""


def test_realtime_latency_tight_failure_case():
    recs = parse(TIGHT)
    ok = check(recs, "realtime-latency", Options(latency_bound=0.170 + 1e-9))
    assert ok.verdict == Verdict.HOLDS and abs(ok.details["max"] - 0.170) < 1e-9
    # the local clocks see at most Delta + delta + eps: the latency property passes
    assert check(recs, "latency", Options(latency_bound=0.160 + 1e-9)).verdict == \
        Verdict.HOLDS
    # one eps smaller, in real time: violated, the slow receiver as witness
    res = check(recs, "realtime-latency", Options(realtime_bound=0.160))
    assert res.verdict == Verdict.VIOLATED and res.clause == "over-bound"
    assert wit(res) == ["i: send m #0", "j: deliver m #0"]


def test_realtime_latency_unknowns_say_why():
    recs = parse(STATIC)
    res = check(recs, "realtime-latency", Options(latency_bound=1.0))
    assert res.verdict == Verdict.UNKNOWN and "logs no real_time" in res.explanation
    assert check(parse(TIGHT), "realtime-latency").verdict == Verdict.UNKNOWN
    # the realtime bound wins over the local one
    assert check(parse(TIGHT), "realtime-latency",
                 Options(latency_bound=0.1, realtime_bound=0.2)).verdict == Verdict.HOLDS


# ---- rate --------------------------------------------------------------------------------

RATE = Options(slot=0.1, rate_max=3, rate_avg=5, rate_window=2)


def packets(p: str, times: list[float], slot: int | None = None) -> str:
    extra = f" x_slot={slot}" if slot is not None else ""
    return "\n".join(f"{p} packet time={t}{extra}" for t in times)


def test_rate_clean_and_end_of_slot_block_counts_in_its_slot():
    # slot 0: three packets, the last at exactly 0.1 (the end-of-slot block); slot 1: two
    recs = parse(packets("p", [0.02, 0.05, 0.1]) + "\n" + packets("p", [0.15, 0.2]) + "\n"
                 + packets("q", [0.1, 0.2, 0.3]))
    res = check(recs, "rate", RATE)
    assert res.verdict == Verdict.HOLDS and res.details["max_per_slot"]["p"] == 3


def test_rate_max_per_slot_violated():
    recs = parse(packets("q", [0.01]) + "\n" + packets("p", [0.11, 0.12, 0.13, 0.14, 0.2]))
    res = check(recs, "rate", RATE)
    assert res.verdict == Verdict.VIOLATED and res.clause == "max-per-slot"
    assert len(res.witness) == 4 and "slot 1" in res.explanation


def test_rate_window_violated():
    # 3 + 3 in slots 1 and 2: within max (3), over avg (5) per 2 slots
    recs = parse(packets("p", [0.11, 0.12, 0.13]) + "\n" + packets("p", [0.21, 0.22, 0.23]))
    res = check(recs, "rate", RATE)
    assert res.verdict == Verdict.VIOLATED and res.clause == "avg-per-window"
    assert len(res.witness) == 6 and "slots 1..2" in res.explanation
    # slots 1 and 3 are not consecutive: holds
    far = parse(packets("p", [0.11, 0.12, 0.13]) + "\n" + packets("p", [0.31, 0.32, 0.33]))
    assert check(far, "rate", RATE).verdict == Verdict.HOLDS


def test_rate_reads_x_slot_over_time():
    # the same times, but the sender says all six are slot 4 and 5: x_slot decides
    recs = parse(packets("p", [0.11, 0.12, 0.13], slot=4) + "\n"
                 + packets("p", [0.11, 0.12], slot=6))
    assert check(recs, "rate", RATE).verdict == Verdict.HOLDS
    recs = parse(packets("p", [0.11, 0.12, 0.13, 0.5], slot=4))
    assert check(recs, "rate", Options(rate_max=3)).verdict == Verdict.VIOLATED


def test_rate_leaves_join_announcements_out():
    """003 (section 4) keeps join messages out of the reservation: the 1 + L copies of a
    join, marked x_join, are not counted."""
    recs = parse(packets("p", [0.11, 0.12, 0.13]) + "\n"
                 + "\n".join("p packet time=0.115 x_join=true" for _ in range(3)))
    assert check(recs, "rate", RATE).verdict == Verdict.HOLDS
    recs = parse("\n".join("p packet time=0.115 x_join=true" for _ in range(5)))
    res = check(recs, "rate", RATE)
    assert res.verdict == Verdict.UNKNOWN and res.explanation.startswith("not applicable")


def test_rate_not_applicable_without_packets_or_options():
    res = check(parse(STATIC), "rate", RATE)
    assert res.verdict == Verdict.UNKNOWN and res.explanation.startswith("not applicable")
    recs = parse(packets("p", [0.11]))
    assert "no reservation" in check(recs, "rate", Options(slot=0.1)).explanation
    assert "--rate-window" in check(recs, "rate", Options(rate_avg=3)).explanation
    assert "positive" in check(recs, "rate", Options(rate_max=3, slot=0.0)).explanation
    assert "at least one" in check(recs, "rate", Options(rate_avg=3, rate_window=0)).explanation
    # a packet that cannot be placed: unknown, counted
    res = check(parse("p packet"), "rate", Options(rate_max=3, slot=0.1))
    assert res.verdict == Verdict.UNKNOWN and res.details["unplaced"] == 1


# ---- packets ignored by every other property; the profile; the command line ---------------

def test_every_other_property_ignores_packets():
    """Adding packet records anywhere changes no verdict of any other property."""
    base = parse(STATIC + JOIN.replace("p ", "s ").replace(" a ", " a2 ")
                 .replace(" b ", " b2 "))
    noisy = []
    for r in base:
        noisy.append(r)
        noisy.append({"trace": "t", "process": r["process"], "kind": "packet",
                      "time": r.get("time", 0.0)})
    noisy.append({"trace": "t", "process": "p", "kind": "packet"})
    opts = Options(latency_bound=0.5, realtime_bound=0.5)
    for name in properties():
        if name == "rate":
            continue
        a, b = check(base, name, opts), check(noisy, name, opts)
        assert a.verdict == b.verdict, name


def test_qos_profile_names_what_003_promises():
    prof = builtin()["qos"]
    assert set(prof.properties) == {"integrity", "total-order-weak", "global-order",
                                    "member-liveness", "realtime-latency", "rate"}
    assert "agreement" not in prof.properties
    assert "faulty sender" in prof.note


def test_cli_options(tmp_path, capsys):
    path = tmp_path / "q.jsonl"
    write_records(path, parse(TIGHT) + parse(packets("i", [0.21, 0.22, 0.23, 0.24])))
    assert main(["check", str(path), "-q", "--realtime-bound", "0.17", "--rate-max", "3",
                 "--slot", "0.1", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    verdicts = {r["property"]: r["verdict"] for t in out["traces"] for r in t["results"]}
    assert verdicts["rate"] == "violated"
    # the report keeps the settings it was judged with
    assert out["options"] == {"latency_bound": None, "scope": "uniform",
                              "realtime_bound": 0.17, "slot": 0.1, "rate_max": 3,
                              "rate_avg": None, "rate_window": None}
    assert main(["check", str(path), "-q", "--realtime-bound", "0.16"]) == 1
    assert "realtime-latency" in capsys.readouterr().out
    # asked for real time on a trace without it: a clear error
    plain = tmp_path / "plain.jsonl"
    write_records(plain, parse(STATIC))
    assert main(["check", str(plain), "-q", "--realtime-bound", "0.16"]) == 2
    assert "real_time" in capsys.readouterr().err
    assert main(["check", str(plain), "-q", "-p", "realtime-latency", "--latency-bound",
                 "0.16"]) == 2
    assert "real_time" in capsys.readouterr().err
    assert main(["check", str(path), "-q", "--rate-avg", "3"]) == 2
    assert main(["check", str(path), "-q", "--guarantee", "qos", "--latency-bound", "0.2",
                 "--slot", "0.1", "--rate-max", "4"]) == 0


# ---- both engines agree on random traces ----------------------------------------------------

@st.composite
def qos_trace(draw):
    """Few processes: sends and deliveries with local and real times and slots, joins,
    leaves, crashes and packets (some join announcements, some without a slot)."""
    procs = [f"p{i}" for i in range(draw(st.integers(1, 4)))]
    msgs = [f"m{i}" for i in range(draw(st.integers(1, 5)))]
    kinds = ["send", "deliver", "deliver", "packet", "packet",
             *draw(st.sampled_from([[], ["join"], ["join", "leave", "crash"]]))]
    out = []
    for _ in range(draw(st.integers(1, 25))):
        rec = {"trace": "t", "process": draw(st.sampled_from(procs)),
               "kind": draw(st.sampled_from(kinds))}
        if rec["kind"] in ("send", "deliver"):
            rec["msg"] = draw(st.sampled_from(msgs))
        if draw(st.integers(0, 3)):
            rec["time"] = draw(st.sampled_from([0.0, 0.05, 0.1, 0.15, 0.2, 0.3]))
        if draw(st.booleans()):
            rec["real_time"] = draw(st.floats(0, 0.5, allow_nan=False))
        if rec["kind"] in ("send", "join", "packet") and draw(st.booleans()):
            rec["x_slot"] = draw(st.integers(0, 3))
        if rec["kind"] == "packet" and not draw(st.integers(0, 4)):
            rec["x_join"] = True
        out.append(rec)
    return out


@given(qos_trace(), st.sampled_from([
    Options(realtime_bound=0.1, slot=0.1, rate_max=2, rate_avg=3, rate_window=2),
    Options(latency_bound=0.2, rate_max=1), Options(slot=0.05, rate_avg=2, rate_window=3),
    Options()]))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_engines_agree_on_random_traces(records, options):
    for name in QOS_NAMES:
        check(records, name, options)  # asserts detect, check and the chunk's view agree


@pytest.mark.parametrize("kw", [{}, {"views": True}, {"crash": True}, {"deps": False},
                                {"times": False}])
def test_member_liveness_holds_on_the_generators_clean_traces(kw):
    """No false alarm on the clean traces of traces/generate.py (with views, with a crash
    whose view excludes the crashed process, without deps or times)."""
    from tomkit.traces.generate import clean_trace

    for seed in range(3):
        recs = clean_trace("t", n_processes=4, n_messages=10, seed=seed, recv=False, **kw)
        assert check(recs, "member-liveness").verdict == Verdict.HOLDS
