"""The property catalogue of the surveys (issue: prefix order, the view guarantees one by
one, agreement and validity with membership, uniform and correct scopes) and the
guarantee profiles. Every hand-written trace goes through both engines (tracedsl.check)."""

from __future__ import annotations

import itertools
import json

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties_hypothesis import random_trace
from tracedsl import CODE, check, chunk_of, parse

from tomkit.checker.profiles import ProfileError, builtin, load
from tomkit.checker.properties import EXACT, Options, properties, resolve
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.cli import main

CORRECT = Options(scope="correct")


def wit(res):
    return [w.describe().split("  [")[0] for w in res.witness]


# ---- prefix order ------------------------------------------------------------------------------

def test_prefix_order_holds_on_prefixes_and_catches_divergence():
    ok = parse("""
        p deliver a
        p deliver b
        q deliver a
    """)
    assert check(ok, "prefix-order").verdict == Verdict.HOLDS
    bad = parse("""
        p deliver a
        p deliver b
        q deliver a
        q deliver c
    """)
    res = check(bad, "prefix-order")
    assert res.verdict == Verdict.VIOLATED and res.clause == "diverge"
    assert wit(res) == ["p: deliver b #1", "q: deliver c #1"]
    # the weak and the strong total order both hold: the sequences never meet again
    assert check(bad, "total-order-weak").verdict == Verdict.HOLDS
    assert check(bad, "total-order-strong").verdict == Verdict.HOLDS


CRASHED_SEQUENCER = """
    s deliver a
    s deliver x
    s crash
    p deliver a
    p deliver b
    q deliver a
    q deliver b
"""


def test_a_crashed_sequencer_breaks_uniform_prefix_order_only():
    recs = parse(CRASHED_SEQUENCER)
    res = check(recs, "prefix-order")
    assert res.verdict == Verdict.VIOLATED and "s delivers x" in res.explanation
    assert check(recs, "prefix-order", CORRECT).verdict == Verdict.HOLDS
    assert check(recs, "prefix-order@correct").verdict == Verdict.HOLDS
    assert resolve("prefix-order@correct").name == "prefix-order@correct"


def test_prefix_order_judges_a_late_joiner_from_its_view():
    recs = parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        p deliver a
        q deliver a
        p view v2 members=p,q,r
        q view v2 members=p,q,r
        r view v2 members=p,q,r
        p deliver b
        q deliver b
        r deliver b
    """)
    assert check(recs, "prefix-order").verdict == Verdict.HOLDS
    # without views the same late start is a divergence (a log is sent whole)
    plain = [r for r in recs if r["kind"] != "view"]
    assert check(plain, "prefix-order").verdict == Verdict.VIOLATED


def test_scope_correct_forgives_only_crashed_processes():
    recs = parse("""
        s deliver b
        s deliver a
        s crash
        p deliver a
        p deliver b
        q deliver a
        q deliver b
    """)
    for name in ("total-order-weak", "global-order", "total-order-strong"):
        assert check(recs, name).verdict == Verdict.VIOLATED, name
        assert check(recs, name, CORRECT).verdict == Verdict.HOLDS, name
    alive = [r for r in recs if r["kind"] != "crash"]
    assert check(alive, "total-order-weak", CORRECT).verdict == Verdict.VIOLATED


# ---- the view guarantees -----------------------------------------------------------------------

def test_view_agreement_clauses():
    ok = parse("""
        p view 1 members=p,q
        q view 1 members=p,q
        p view 2 members=p
    """)
    assert check(ok, "view-agreement").verdict == Verdict.HOLDS
    cases = {
        "membership-mismatch": "p view 1 members=p,q\nq view 1 members=q",
        "self-inclusion": "p view 1 members=q",
        "reinstalled-view": "p view 1 members=p\np view 2 members=p\np view 1 members=p",
        "decreasing-view-id": "p view 5 members=p\np view 3 members=p",
    }
    for clause, text in cases.items():
        res = check(parse(text), "view-agreement")
        assert res.verdict == Verdict.VIOLATED and res.clause == clause, (clause, res)
    # ids that are not numbers carry no order
    named = parse("p view b members=p\np view a members=p")
    assert check(named, "view-agreement").verdict == Verdict.HOLDS
    assert check(parse("p deliver a"), "view-agreement").verdict == Verdict.UNKNOWN


def test_same_view_delivery():
    recs = parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        p send a
        p deliver a
        q view v2 members=p,q
        q deliver a
        p view v2 members=p,q
    """)
    res = check(recs, "same-view-delivery")
    assert res.verdict == Verdict.VIOLATED and res.clause == "two-views"
    assert wit(res) == ["p: deliver a #0", "q: deliver a #0"]
    assert check(recs, "sending-view-delivery").verdict == Verdict.VIOLATED
    # Totem's transitional delivery: every deliverer delivers the old message in the new
    # view; EVS keeps same-view delivery and virtual synchrony, not sending-view delivery
    evs = parse("""
        p view v1 members=p,q,r
        q view v1 members=p,q,r
        r view v1 members=p,q,r
        p send a
        r crash
        p view v2 members=p,q
        q view v2 members=p,q
        p deliver a
        q deliver a
    """)
    assert check(evs, "same-view-delivery").verdict == Verdict.HOLDS
    assert check(evs, "virtual-synchrony").verdict == Verdict.HOLDS
    assert check(evs, "sending-view-delivery").verdict == Verdict.VIOLATED


# ---- agreement and validity ----------------------------------------------------------------------

def test_uniform_agreement_against_a_crashed_deliverer():
    recs = parse(CRASHED_SEQUENCER)
    res = check(recs, "agreement")
    assert res.verdict == Verdict.VIOLATED and res.clause == "uniform"
    assert wit(res)[0] == "s: deliver x #1"
    assert check(recs, "agreement", CORRECT).verdict == Verdict.HOLDS
    # liveness judges correct deliverers only, as the non-uniform form
    assert check(recs, "liveness").verdict == Verdict.HOLDS


def test_agreement_between_correct_processes():
    recs = parse("""
        p deliver a
        p deliver b
        q deliver a
    """)
    for opts in (Options(), CORRECT):
        res = check(recs, "agreement", opts)
        assert res.verdict == Verdict.VIOLATED and res.clause == "agreement"
        assert wit(res) == ["p: deliver b #1", "q: deliver a"]


JOINER = """
    p view v1 members=p,q
    q view v1 members=p,q
    p send a
    p deliver a
    q deliver a
    p view v2 members=p,q,r
    q view v2 members=p,q,r
    r view v2 members=p,q,r
    q send b
    p deliver b
    q deliver b
    r deliver b
"""


def test_a_late_joiner_owes_nothing_before_its_view():
    recs = parse(JOINER)
    for name in ("agreement", "validity", "liveness"):
        assert check(recs, name).verdict == Verdict.HOLDS, name
    # but it owes what was delivered in the views it installed
    short = [r for r in recs if not (r["process"] == "r" and r["kind"] == "deliver")]
    for name in ("agreement", "liveness"):
        assert check(short, name).verdict == Verdict.VIOLATED, name


def test_fifo_judges_a_late_joiner_from_its_view():
    recs = parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        p send a
        p deliver a
        q deliver a
        p view v2 members=p,q,r
        q view v2 members=p,q,r
        r view v2 members=p,q,r
        p send b
        p deliver b
        q deliver b
        r deliver b
    """)
    assert check(recs, "fifo-order").verdict == Verdict.HOLDS
    # r owes b: skipping it for a later message of p is still a gap
    gap = recs + parse("p send c\np deliver c\nq deliver c\nr deliver c")
    gap = [x for x in gap if not (x["process"] == "r" and x.get("msg") == "b")]
    res = check(gap, "fifo-order")
    assert res.verdict == Verdict.VIOLATED and "p sends b before c" in res.explanation
    # without views the late start is a gap
    plain = [x for x in recs if x["kind"] != "view"]
    assert check(plain, "fifo-order").verdict == Verdict.VIOLATED


def test_a_leaver_is_judged_up_to_its_leave():
    recs = parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        q leave
        p send a
        p deliver a
    """)
    assert check(recs, "agreement").verdict == Verdict.HOLDS
    assert check(recs, "liveness").verdict == Verdict.HOLDS


def test_validity():
    recs = parse("""
        p send a
        q deliver a
    """)
    res = check(recs, "validity")
    assert res.verdict == Verdict.VIOLATED and wit(res)[0] == "p: send a #0"
    crashed = recs + parse("p crash")
    assert check(crashed, "validity").verdict == Verdict.HOLDS
    assert check(parse("p deliver a"), "validity").verdict == Verdict.UNKNOWN


# ---- both engines on random traces, in both scopes, against the literal definitions ------------

@st.composite
def with_leaves(draw):
    recs = draw(random_trace())
    procs = sorted({r["process"] for r in recs})
    for p in draw(st.lists(st.sampled_from(procs), max_size=2, unique=True)) if procs else []:
        at = draw(st.integers(0, len(recs)))
        recs.insert(at, {"trace": "t", "process": p, "kind": "leave"})
    return recs


@given(with_leaves(), st.sampled_from(["uniform", "correct"]))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
def test_engines_agree_in_both_scopes(records, scope):
    options = Options(scope=scope)
    c = chunk_of(records)
    for name, prop in properties().items():
        code = prop.detect(c, options)[0]
        ref = prop.check(c.trace(0), options)
        if code != EXACT:
            assert CODE[int(code)] == ref.verdict, (name, scope, ref)
        if ref.verdict == Verdict.VIOLATED:
            assert ref.witness and ref.explanation


def literal_prefix(trace: Trace) -> bool:
    installed = {p: {e.view for e in trace.events[p] if e.kind == "view"}
                 for p in trace.processes}

    def seq(p, q):
        views = trace.delivery_views(p)
        return [e.msg for i, e in trace.first_deliveries[p]
                if not trace.has_views or views[i] is None or views[i] in installed[q]]

    for p, q in itertools.combinations(trace.processes, 2):
        a, b = seq(p, q), seq(q, p)
        short, long_ = sorted((a, b), key=len)
        if long_[:len(short)] != short:
            return False
    return True


def literal_same_view(trace: Trace) -> bool:
    where: dict[str, set] = {}
    for p in trace.processes:
        views = trace.delivery_views(p)
        for i, e in trace.first_deliveries[p]:
            where.setdefault(e.msg, set()).add(views[i])
    return all(len(v) == 1 for v in where.values())


@given(random_trace())
@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
def test_catalogue_checks_match_literal_definitions(records):
    trace = Trace.from_records(records)
    props = properties()
    prefix = props["prefix-order"].check(trace, Options()).verdict == Verdict.HOLDS
    assert prefix == literal_prefix(trace)
    if trace.has_views:
        same = props["same-view-delivery"].check(trace, Options()).verdict == Verdict.HOLDS
        assert same == literal_same_view(trace)


# ---- profiles ----------------------------------------------------------------------------------

def test_builtin_profiles_load_and_name_known_properties():
    profs = builtin()
    assert {"atomic-broadcast-uniform", "atomic-broadcast", "isis-virtual-synchrony",
            "totem-evs", "replicated-log", "toto-agreed", "model-toto-family",
            "model-abcast-tomp"} <= set(profs)
    for p in profs.values():
        assert p.source and p.title
        for n in p.properties:
            resolve(n)


def test_every_model_names_its_profile():
    from tomkit.model.protocols import PROTOCOLS

    profs = builtin()
    want = {"toto": "model-toto-family", "all-ack": "model-toto-family",
            "s-toto": "model-toto-family", "g-toto": "model-toto-family",
            "gl-toto": "model-toto-family", "abcast": "model-abcast-tomp",
            "tomp": "model-abcast-tomp", "hybrid": "model-hybrid",
            "token-site": "model-hybrid", "symmetric": "model-hybrid",
            "toto-dynamic": "model-toto-dynamic"}
    want["qos"] = "model-qos"
    for name, proto in PROTOCOLS.items():
        if name in want:
            assert proto.profile == want[name], name
        # the profile a model names is its one list of promises (model/ cannot read it)
        assert proto.profile.startswith("model-") and proto.profile in profs, name
    assert set(want) <= set(PROTOCOLS)
    # no model profile without its model: the profile is the promise of a protocol
    named = {proto.profile for proto in PROTOCOLS.values()}
    assert {n for n in profs if n.startswith("model-")} == named
    # 003's model checks what it can of every run; the paper's profile adds the rest
    assert set(profs["model-qos"].properties) < set(profs["qos"].properties)


@pytest.mark.parametrize("text,why", [
    ('name="x"\ntitle="t"\nsource="s"\nproperties=["integrity"]\nextra=1', "unknown key 'extra'"),
    ('name="x"\ntitle="t"\nproperties=["integrity"]', "missing key 'source'"),
    ('name="x"\ntitle="t"\nsource="s"\nproperties=["no-such"]', "unknown property no-such"),
    ('name="x"\ntitle="t"\nsource="s"\nproperties=["integrity@correct"]', "has no scope"),
    ('name="x"\ntitle="t"\nsource="s"\nproperties=["fifo-order", "fifo-order"]', "twice"),
    ('name="x"\ntitle="t"\nsource="s"\nproperties=[]', "non-empty list"),
    ('name = ', "not TOML"),
])
def test_bad_profiles_are_refused_with_file_and_key(tmp_path, text, why):
    f = tmp_path / "mine.toml"
    f.write_text(text)
    with pytest.raises(ProfileError, match=why) as e:
        load(f)
    assert str(f) in str(e.value)


def _write(tmp_path, text: str):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in parse(text)))
    return str(path)


def test_guarantee_judges_its_profile_and_tables_the_others(tmp_path, capsys):
    # a Raft-like log: one writer thread's puts are not FIFO across threads of a member,
    # the logs are prefixes of one another
    path = _write(tmp_path, """
        p send a
        p send b
        p deliver b
        p deliver a
        q deliver b
        q deliver a
    """)
    assert main(["check", path, "-q", "--guarantee", "replicated-log"]) == 0
    out = capsys.readouterr().out
    assert "guarantee replicated-log: integrity, total-order-weak, prefix-order" in out
    assert "replicated-log            satisfied <- judged" in out
    assert "model-toto-family         violated: fifo-order in trace t" in out
    assert main(["check", path, "-q", "--guarantee", "model-toto-family", "--format",
                 "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["guarantee"] == "model-toto-family" and doc["verdict"] == "violated"
    rows = {r["profile"]: r for r in doc["profiles"]}
    assert rows["model-toto-family"]["property"] == "fifo-order"
    assert rows["replicated-log"]["verdict"] == "satisfied"


def test_guarantee_cli_errors(tmp_path, capsys):
    path = _write(tmp_path, "p deliver a")
    assert main(["check", path, "--guarantee", "nope"]) == 2
    assert "unknown guarantee 'nope'" in capsys.readouterr().err
    assert main(["check", path, "--guarantee", "replicated-log", "-p", "integrity"]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('name="x"')
    assert main(["check", path, "--guarantee-file", str(bad)]) == 2
    assert "missing key" in capsys.readouterr().err
    assert main(["check", "--list-guarantees"]) == 0
    assert "totem-evs" in capsys.readouterr().out


def test_guarantee_file_of_ones_own(tmp_path, capsys):
    mine = tmp_path / "mine.toml"
    mine.write_text('name = "mine"\ntitle = "t"\nsource = "s"\n'
                    'properties = ["integrity", "prefix-order@correct"]\n')
    path = _write(tmp_path, CRASHED_SEQUENCER)
    assert main(["check", path, "-q", "--guarantee-file", str(mine)]) == 0
    out = capsys.readouterr().out
    # integrity is unknown: the trace logs no sends
    assert "mine                      unknown <- judged" in out
    assert main(["check", path, "-q", "-p", "prefix-order"]) == 1
    assert main(["check", path, "-q", "-p", "prefix-order", "--scope", "correct"]) == 0


def literal_agreement(trace: Trace, scope: str) -> bool:
    """Défago et al. 2004, section 2.2, read literally with Chockler et al.'s membership:
    for every process p (a correct one, for the non-uniform form) and every message m it
    delivers (first) in view V, every correct process q that installed V (any q when the trace
    has no views) and did not leave in V delivers m."""
    crashed = {p for p in trace.processes
               if any(e.kind == "crash" for e in trace.events[p])}
    correct = [p for p in trace.processes if p not in crashed]
    delivered = {p: {e.msg for e in trace.events[p] if e.kind == "deliver"}
                 for p in trace.processes}
    for p in trace.processes:
        if scope == "correct" and p in crashed:
            continue
        views = trace.delivery_views(p)
        for i, e in trace.first_deliveries[p]:  # a repeat is integrity's business
            for q in correct:
                if e.msg in delivered[q]:
                    continue
                evs = trace.events[q]
                left_in = None
                cur = None
                for x in evs:
                    if x.kind == "view":
                        cur = x.view
                    elif x.kind == "leave" and left_in is None:
                        left_in = cur if cur is not None else ""
                if trace.has_views:
                    installed = {x.view for x in evs if x.kind == "view"}
                    if views[i] is None or views[i] not in installed or left_in == views[i]:
                        continue
                elif left_in is not None:
                    continue
                return False
    return True


@given(with_leaves(), st.sampled_from(["uniform", "correct"]))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
def test_agreement_matches_its_literal_definition(records, scope):
    trace = Trace.from_records(records)
    got = properties()["agreement"].check(trace, Options(scope=scope)).verdict
    assert (got == Verdict.HOLDS) == literal_agreement(trace, scope)
