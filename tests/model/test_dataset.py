"""The data set generator: layout, determinism, faulty variants that really violate, the
atomic commit, and the CLI module."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.cli import generate as generate_cli
from tomkit.model.dataset import (
    generate,
    ground_truth,
    part_files,
    reorder,
    simulate_mutant,
    write_bulk,
)
from tomkit.model.net.links import Delay
from tomkit.model.sim import Runaway, SimConfig
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import RULES


def _verdicts(path: str) -> dict[str, dict[str, str]]:
    rep = check_paths(list(part_files(path)), select(None, Options()), Options())
    return {o.trace: {n: str(v) for n, v in o.verdicts.items()} for o in rep.outcomes}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "ds"
    summary = generate(str(out), ["toto", "all-ack"], 60, faulty=0.4, seed=5, workers=2,
                       progress=False)
    return str(out), summary


def test_layout_and_ground_truth(data):
    out, summary = data
    parts = sorted(os.path.relpath(os.path.dirname(f), out) for f in part_files(out))
    assert "protocol=toto/config=n4-d2-poisson-r100" in parts
    assert "protocol=planted/config=n4-m11" in parts
    meta = json.load(open(os.path.join(out, "_generate.json")))
    assert meta["seed"] == 5 and meta["traces"] == 60 == summary["traces"]
    truth = ground_truth(out)
    assert len(truth) == 24  # 40 % of 60
    kinds = {t["variant"].split(":")[0] for t in truth.values()}
    assert kinds == {"mutant", "reorder", "planted"}
    # about 100 events a trace
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in part_files(out))
    assert 60 * 60 < rows < 60 * 200


def test_faulty_variants_violate_what_they_say(data):
    out, _ = data
    verdicts = _verdicts(out)
    truth = ground_truth(out)
    assert len(verdicts) == 60
    for tid, v in verdicts.items():
        t = truth.get(tid)
        violated = {n for n, x in v.items() if x == "violated"}
        if t is None:
            assert not violated, tid  # clean simulated traces hold
        elif t["variant"] == "mutant:majority":
            assert violated <= set(t["may_also"]), tid
        elif t["variant"] == "reorder":
            assert violated, tid
            assert violated <= set(t["expected"]) | set(t["may_also"]), tid
        else:  # planted: exactly the ground truth among the default properties
            assert violated == {p for p in t["expected"] if p in v}, tid


def test_deterministic_and_replaced_atomically(data, tmp_path):
    out, _ = data
    again = tmp_path / "again"
    generate(str(again), ["toto", "all-ack"], 60, faulty=0.4, seed=5, workers=1,
             progress=False)
    a = [pq.read_table(f).to_pylist() for f in part_files(out)]
    b = [pq.read_table(f).to_pylist() for f in part_files(str(again))]
    assert a == b  # worker count changes nothing
    generate(str(again), ["s-toto"], 4, seed=6, progress=False)  # replaces the old one
    assert {os.path.basename(os.path.dirname(os.path.dirname(f)))
            for f in part_files(str(again))} == {"protocol=s-toto"}
    assert sorted(os.listdir(tmp_path)) == ["again"]
    with pytest.raises(ValueError, match="unknown protocol"):
        generate(str(again), ["nope"], 4, progress=False)
    assert sorted(os.listdir(tmp_path)) == ["again"]


def test_reorder_swaps_two_deliveries_of_one_process():
    recs = [{"trace": "t", "process": p, "kind": "deliver", "msg": m}
            for p in ("a", "b") for m in ("x", "y", "z")]
    out, what = reorder(recs, np.random.default_rng(0))
    mine = [r["msg"] for r in out if r["process"] == what["process"]]
    assert sorted(mine) == ["x", "y", "z"] and mine != ["x", "y", "z"]
    assert [r["msg"] for r in out if r["process"] != what["process"]] == ["x", "y", "z"]


def test_mutant_runs_through_simconfig_rule_and_runaways_stop():
    base = SimConfig(protocol="toto", n=8, options={"delta": 4, "rule": "majority"}, rate=300,
                     messages=6,
                     delay=Delay("exponential", 0.01), trace_id="m")
    ended, cut = [], {}
    for seed in range(12):
        try:
            res = simulate_mutant(dataclasses.replace(base, seed=seed))
            assert any(r["kind"] == "deliver" for r in res.records)
            ended.append(seed)
        except Runaway as e:
            assert "more than 19200 events" in str(e)  # 50 * messages * n^2
            cut[seed] = str(e)
    assert ended and cut  # both kinds occur, so the budget decides something
    for seed, message in cut.items():  # deterministic: cut again at the same point
        with pytest.raises(Runaway) as e:
            simulate_mutant(dataclasses.replace(base, seed=seed))
        assert str(e.value) == message
    assert "majority" not in RULES and set(MUTANTS) & set(RULES) == set()
    with pytest.raises(Runaway):  # a run that ends, cut by a small budget
        simulate_mutant(dataclasses.replace(base, seed=ended[0]), max_events=5)


def test_bulk_and_cli(tmp_path, capsys):
    s = write_bulk(str(tmp_path / "bulk"), 50, faulty=0.1, seed=2)
    assert s["traces"] == 55 and s["records"] > 50 * 100
    ap = argparse.ArgumentParser()
    generate_cli.add_parser(ap.add_subparsers())
    args = ap.parse_args(["generate", "--protocol", "gl-toto", "--traces", "6", "--out",
                          str(tmp_path / "cli"), "--seed", "9", "--quiet"])
    assert args.func(args) == 0
    assert "seed 9" in capsys.readouterr().out
    args = ap.parse_args(["generate", "--protocol", "nope", "--traces", "6", "--out",
                          str(tmp_path / "x"), "--quiet"])
    assert args.func(args) == 2
