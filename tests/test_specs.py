"""TLC on tomkit's TLA+ specs: every small model of specs/manifest.json ("ci": true) gives
the recorded outcome; every counterexample, converted to a v1 trace, fails `tomkit check`
with the property that matches the violated invariant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomkit.fuzz.tlc.runner import run_tlc
from tomkit.fuzz.tlc.trace import check_counterexample, write_counterexample

pytestmark = pytest.mark.tlc

SPECS = Path(__file__).parent.parent / "specs"
MANIFEST = json.loads((SPECS / "manifest.json").read_text())
CI_MODELS = [(spec["folder"], model) for spec in MANIFEST["specifications"]
             for model in spec["models"] if model["ci"]]


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
    for folder in ("ABCAST", "TOMP", "Hybrid"):
        assert any(f == folder and m["expect"] == "violation" for f, m in CI_MODELS)
        assert any(f == folder and m["expect"] == "ok" for f, m in CI_MODELS)


@pytest.mark.parametrize("folder,model", CI_MODELS,
                         ids=[f"{f}/{m['config']}" for f, m in CI_MODELS])
def test_model(folder, model, tmp_path):
    res = run_tlc(SPECS / folder / model["module"], SPECS / folder / model["config"], workers=2)
    assert res.exhaustive and res.seed is None
    assert res.status == model["expect"], res.summary()
    assert res.distinct_states and res.distinct_states > 1
    if model["expect"] == "ok":
        assert res.behaviour == [] and res.violated is None
        return
    assert res.behaviour[0].action == "Initial predicate"
    path = tmp_path / "cex.jsonl"
    want = model.get("expect_violated", "GapFreeTotalOrder")
    if want not in ("GapFreeTotalOrder", "deadlock"):
        # an invariant of the protocol's own state (no trace-checker counterpart)
        assert res.violation_kind == "invariant" and res.violated == want, res.summary()
        return
    if want == "deadlock":
        # a literal reading that strands a message (Hybrid's Figure 4 reassign rules):
        # TLC stops where nothing can move, and the trace shows a message multicast that
        # nobody delivers, which the checker's liveness rejects
        assert res.violation_kind == "deadlock", res.summary()
        write_counterexample(res, path)
        conf = check_counterexample(path, "Validity")
        assert conf.confirmed, (conf, res.summary())
        return
    assert res.violation_kind == "invariant" and res.violated == "GapFreeTotalOrder"
    write_counterexample(res, path)
    conf = check_counterexample(path, res.violated)
    assert conf.confirmed, (conf, res.summary())
    assert conf.violated == ["total-order-strong"]
