"""TLC on tomkit's TLA+ specs: every small model of specs/manifest.json ("ci": true) gives
the recorded outcome; every counterexample, converted to a v1 trace, fails `tomkit check`
with the property that matches the violated invariant."""

from __future__ import annotations

import functools
import json

import pytest
from locations import ROOT

from tomkit.fuzz.tlc.runner import run_tlc
from tomkit.fuzz.tlc.trace import check_counterexample, write_counterexample

pytestmark = pytest.mark.tlc

SPECS = ROOT / "specs"
MANIFEST = json.loads((SPECS / "manifest.json").read_text())
CI_MODELS = [(spec["folder"], model) for spec in MANIFEST["specifications"]
             for model in spec["models"] if model["ci"]]


@functools.cache
def run_model(folder: str, module: str, config: str):
    """TLC on one model, once per session (the QoS tests read the counterexamples again).
    One worker and the quick JVM (QUICK_JVM): the CI models have at most some 10^5
    states, where both cost less CPU (docs/testing.md), and one worker finds the same
    shortest counterexample every run."""
    return run_tlc(SPECS / folder / module, SPECS / folder / config, workers=1,
                   quick_start=True)


def test_manifest_lists_existing_files_and_readmes():
    for spec in MANIFEST["specifications"]:
        folder = SPECS / spec["folder"]
        assert (folder / "README.md").is_file(), folder
        for module in spec["modules"]:
            assert (folder / module).is_file(), module
        for model in spec["models"]:
            assert (folder / model["module"]).is_file() and (folder / model["config"]).is_file()
            assert model["expect"] in ("ok", "violation")
            if "result" in model:  # what TLC printed when the manifest was written
                assert model["result"]["outcome"] == model["expect"], model
    # every config beside a spec is in the manifest
    listed = {(s["folder"], m["config"]) for s in MANIFEST["specifications"] for m in s["models"]}
    found = {(p.parent.name, p.name) for p in SPECS.glob("*/*.cfg")}
    assert found == listed


def test_each_broken_protocol_has_a_ci_counterexample():
    """Every specification with a broken variant (a model expected to fail) has one in CI,
    beside a model of the protocol that holds."""
    broken = {s["folder"] for s in MANIFEST["specifications"] for m in s["models"]
              if m["expect"] == "violation"}
    assert {"ABCAST", "TOMP", "Hybrid", "QoS", "Sequencer"} <= broken
    for folder in sorted(broken):
        assert any(f == folder and m["expect"] == "violation" for f, m in CI_MODELS)
        assert any(f == folder and m["expect"] == "ok" for f, m in CI_MODELS)


@pytest.mark.parametrize("folder,model", CI_MODELS,
                         ids=[f"{f}/{m['config']}" for f, m in CI_MODELS])
def test_model(folder, model, tmp_path):
    res = run_model(folder, model["module"], model["config"])
    assert res.exhaustive and res.seed is None
    assert res.status == model["expect"], res.summary()
    assert res.distinct_states and res.distinct_states > 1
    if model["expect"] == "ok":
        assert res.behaviour == [] and res.violated is None
        return
    assert res.behaviour[0].action == "Initial predicate"
    path = tmp_path / "cex.jsonl"
    # a model may name the invariant it breaks (Hybrid: expect_violated; QoS: violates)
    # and the checker property that states it (QoS: the gap-free order on what 003
    # makes correct processes agree on)
    want = model.get("expect_violated", model.get("violates", "GapFreeTotalOrder"))
    if want == "deadlock":
        # a literal reading that strands a message (Hybrid's Figure 4 reassign rules):
        # TLC stops where nothing can move, and the trace shows a message multicast that
        # nobody delivers, which the checker's liveness rejects
        assert res.violation_kind == "deadlock", res.summary()
        write_counterexample(res, path)
        conf = check_counterexample(path, "Validity")
        assert conf.confirmed, (conf, res.summary())
        return
    assert res.violation_kind == "invariant" and res.violated == want, res.summary()
    if "checker_property" in model and model["checker_property"] is None:
        return  # a latency bound shown tight: the trace's times are state numbers
    if want != "GapFreeTotalOrder" and "checker_property" not in model:
        return  # an invariant of the protocol's own state (no trace-checker counterpart)
    write_counterexample(res, path)
    conf = check_counterexample(path, res.violated,
                                {want: model.get("checker_property", "total-order-strong")})
    assert conf.confirmed, (conf, res.summary())
    assert conf.violated == ["total-order-strong"]


def _last(res):
    assert res.status == "violation", res.summary()
    return res.behaviour[-1].values


def test_qos_short_timeout_times_out_a_correct_sender_whose_clock_is_behind():
    """QoS_ShortTimeout (timeout delta instead of delta + eps, 003 section 3.3): nobody
    crashes, and a process skips the message of a sender whose clock is behind its own,
    a message another process delivers."""
    v = _last(run_model("QoS", "QoS_ShortTimeout.tla", "QoS_ShortTimeout.cfg"))
    assert v["crashed"] == frozenset()
    dl, off = v["delivered"], v["off"]

    def key(m):  # (slot, sender index): the order 003 delivers in
        return (m[1], m[0])

    skipped = [(p, m) for p in range(len(dl)) for q in range(len(dl)) for m in dl[q]
               if m not in dl[p] and any(key(m2) > key(m) for m2 in dl[p])]
    assert skipped
    for p, (k, _) in skipped:
        assert off[p] > off[k - 1]  # the skipper's clock runs ahead of the sender's


def test_qos_literal_join_window_misses_the_skewed_joiner():
    """QoS_LiteralJoin is the reading aid's B5 case: r joins with its clock ahead for slot
    s_r; p, behind, wakes after r's join left, never hears of it, gets s_p < s_r and skips
    r's slot-s_r message, which another process delivers."""
    v = _last(run_model("QoS", "QoS_LiteralJoin.tla", "QoS_LiteralJoin.cfg"))
    start, off, jnet, dl = v["start"], v["off"], v["jnet"], v["delivered"]
    joined = [i for i, s in enumerate(start) if 0 < s <= 3]  # slots 0..3; members start at 0
    r, p = max(joined, key=lambda i: start[i]), min(joined, key=lambda i: start[i])
    assert start[r] > start[p] and off[r] > off[p]
    assert jnet[r][p] == "none"  # p was not in the group when r's join left
    m = (r + 1, start[r])
    assert m not in dl[p] and any(m in dl[q] for q in range(len(dl)) if q != p)


def test_qos_latency_bounds_are_tight():
    """One tick less than 003's bounds fails: Delta + delta + eps of real time in a
    crash-free run, Delta + delta + 2 eps only with a crash (Figures 3 and 4)."""
    static = _last(run_model("QoS", "QoS.tla", "QoS_TightStatic.cfg"))
    assert static["crashed"] == frozenset()
    crash = _last(run_model("QoS", "QoS.tla", "QoS_TightCrash.cfg"))
    assert crash["crashed"] == frozenset({2})


def test_qos_contract_variants_break_the_declared_max_as_003s_proviso_says():
    """QoSContract: without the shaper a slot carries more than the max declared for it;
    with RN(r) taking effect in the slot it is made in, a decrease leaves that slot,
    partly sent under the old r, over the new max (model/qos/reserve.py's decisions)."""
    v = _last(run_model("QoS", "QoSContract_Unshaped.tla", "QoSContract_Unshaped.cfg"))
    s = next(s for s, n in v["sent"].items() if n > 0)
    assert v["sent"][s] > v["decl"][s][1] and v["queue"] == ()
    res = run_model("QoS", "QoSContract_EarlyRN.tla", "QoSContract_EarlyRN.cfg")
    assert res.behaviour[-1].action == "Renegotiate"
    before, after = res.behaviour[-2].values, res.behaviour[-1].values
    s = after["t"] // 2  # SlotLen = 2: the slot the RN was made in
    assert after["decl"][s][1] < before["decl"][s][1]  # a decrease, made in slot s
    assert after["sent"][s] > after["decl"][s][1]
