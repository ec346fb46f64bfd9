"""`tomkit check` end to end: exit codes, text and JSON output, options, bad input."""

from __future__ import annotations

import gzip
import json

import pytest

from tomkit.cli import main
from tomkit.traces.generate import clean_trace, faulty_trace
from tomkit.traces.writer import write_records


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def clean(tmp_path):
    path = tmp_path / "clean.jsonl"
    recs = clean_trace("a", seed=1) + clean_trace("b", seed=2)
    write_records(path, recs)
    return path


@pytest.fixture
def swapped(tmp_path):
    recs, truth = faulty_trace("bad", "swap", seed=3)
    path = tmp_path / "swapped.parquet"
    write_records(path, clean_trace("ok", seed=5) + recs)
    return path, truth


def test_clean_file_exits_0(capsys, clean):
    code, out, _ = run(capsys, "check", str(clean), "-q")
    assert code == 0
    assert "2 trace(s)" in out and "verdict: holds" in out
    assert "VIOLATED" not in out


def test_violation_exits_1_and_prints_witness(capsys, swapped):
    path, truth = swapped
    code, out, _ = run(capsys, "check", str(path), "-q")
    assert code == 1
    assert "total-order-weak    VIOLATED" in out
    a, b = truth["messages"]
    assert f"{a}" in out and f"{b}" in out
    assert f"[{path}: row" in out  # witness events cite Parquet rows
    assert "verdict: violated" in out


def test_json_output(capsys, swapped):
    path, truth = swapped
    code, out, _ = run(capsys, "check", str(path), "--format", "json", "-q")
    assert code == 1
    doc = json.loads(out)
    assert doc["verdict"] == "violated"
    by_trace = {t["trace"]: t for t in doc["traces"]}
    assert by_trace["ok"]["verdicts"]["total-order-weak"] == "holds"
    bad = by_trace["bad"]
    assert bad["verdicts"]["total-order-weak"] == "violated"
    res = next(r for r in bad["results"] if r["property"] == "total-order-weak")
    assert len(res["witness"]) == 4
    assert {w["msg"] for w in res["witness"]} == set(truth["messages"])
    assert all("row" in w for w in res["witness"])
    counts = doc["summary"]["counts"]["total-order-weak"]
    assert counts == {"holds": 1, "unknown": 0, "violated": 1}


def test_property_selection(capsys, swapped):
    path, _ = swapped
    code, out, _ = run(capsys, "check", str(path), "-p", "integrity,causal-order", "-q")
    assert code == 0
    assert "properties: integrity, causal-order" in out
    code, _, err = run(capsys, "check", str(path), "-p", "nonsense")
    assert code == 2 and "unknown property nonsense" in err


def test_latency_bound_and_liveness_flags(capsys, tmp_path):
    recs, truth = faulty_trace("s", "slow", seed=1)
    path = tmp_path / "slow.jsonl"
    write_records(path, recs)
    code, out, _ = run(capsys, "check", str(path), "-q")
    props_line = next(line for line in out.splitlines() if line.startswith("properties:"))
    assert code == 0 and "latency" not in props_line
    code, out, _ = run(capsys, "check", str(path), "--latency-bound", str(truth["bound"]), "-q")
    assert code == 1 and "latency" in out and "over the bound" in out
    recs, _ = faulty_trace("l", "lost", seed=1)
    write_records(path, recs)
    assert run(capsys, "check", str(path), "-q")[0] == 0
    code, out, _ = run(capsys, "check", str(path), "--liveness", "-q")
    assert code == 1 and "never delivered by correct process" in out


def test_bad_input_exits_2_naming_file_line_field(capsys, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"trace": "t", "process": "p", "kind": "deliver", "msg": "a"}\n'
                    '{"trace": "t", "process": "p", "kind": "delvier", "msg": "b"}\n')
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and out == ""
    assert f"{path}:2" in err and "'kind'" in err and "delvier" in err


def test_keep_going_counts_and_checks_the_rest(capsys, tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = clean_trace("t", seed=1, n_messages=5)
    lines = [json.dumps(r) for r in good]
    lines.insert(3, '{"trace": "t", "process": 7, "kind": "deliver", "msg": "x"}')
    lines.insert(6, "{not json")
    path.write_text("\n".join(lines) + "\n")
    code, out, _ = run(capsys, "check", str(path), "--keep-going", "-q")
    assert f"{len(good):,} records accepted, 2 rejected" in out
    assert f"{path}:4" in out and f"{path}:7" in out
    assert code == 2  # no violation, but input was rejected
    code, out, _ = run(capsys, "check", str(path), "--keep-going", "--format", "json", "-q")
    doc = json.loads(out)
    assert doc["summary"]["accepted"] == len(good) and doc["summary"]["rejected"] == 2
    assert [e["line"] for e in doc["rejected"]] == [4, 7]


def test_merge_one_log_per_process(capsys, tmp_path):
    recs, _ = faulty_trace("t", "swap", seed=2)
    paths = []
    for p in sorted({r["process"] for r in recs}):
        path = tmp_path / f"{p}.jsonl"
        write_records(path, [r for r in recs if r["process"] == p])
        paths.append(str(path))
    # separately, each file is one process: no two processes to disagree
    code, out, _ = run(capsys, "check", *paths, "-q", "-p", "total-order-weak")
    assert code == 0
    code, out, _ = run(capsys, "check", *paths, "--merge", "-q", "-p", "total-order-weak")
    assert code == 1 and "1 trace(s)" in out


@pytest.mark.parametrize("read_rows", [1, 2, 1 << 18])
def test_grouped_promise_broken_is_bad_input(capsys, tmp_path, monkeypatch, read_rows):
    from tomkit.checker import engine

    monkeypatch.setattr(engine, "READ_ROWS", read_rows)  # the break inside or across batches
    path = tmp_path / "g.jsonl"
    recs = [{"trace": t, "process": "p", "kind": "deliver", "msg": f"m{i}"}
            for i, t in enumerate("aba")]
    lines = ['{"format": "tomkit-trace", "version": 1, "grouped": true}']
    lines += [json.dumps(r) for r in recs]
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "check", str(path))
    assert code == 2 and f"{path}:4" in err and "grouped" in err
    # without the promise the same records are fine: traces may interleave
    path.write_text("\n".join(lines[1:]) + "\n")
    code, out, _ = run(capsys, "check", str(path), "-q")
    assert code == 0 and "2 trace(s)" in out


def test_interleaved_traces_and_gzip(capsys, tmp_path):
    a = clean_trace("a", seed=1)
    b, _ = faulty_trace("b", "fifo", seed=1)
    mixed = [x for pair in zip(a, b) for x in pair] + a[len(b):] + b[len(a):]
    path = tmp_path / "mixed.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for r in mixed:
            f.write(json.dumps(r) + "\n")
    code, out, _ = run(capsys, "check", str(path), "-q", "--format", "json", "-p",
                       "integrity,fifo-order")
    doc = json.loads(out)
    verdicts = {t["trace"]: t["verdicts"]["fifo-order"] for t in doc["traces"]}
    assert verdicts == {"a": "holds", "b": "violated"} and code == 1


def test_many_traces_in_small_chunks(capsys, tmp_path, monkeypatch):
    # chunking must not change verdicts: force tiny chunks over a grouped file
    from tomkit.checker import engine

    recs = []
    for i in range(12):
        if i % 4 == 3:
            recs += faulty_trace(f"t{i}", "gap", seed=i)[0]
        else:
            recs += clean_trace(f"t{i}", seed=i)
    path = tmp_path / "many.parquet"
    write_records(path, recs)
    code, out, _ = run(capsys, "check", str(path), "-q", "--format", "json")
    monkeypatch.setattr(engine, "CHUNK_ROWS", 50)
    code2, out2, _ = run(capsys, "check", str(path), "-q", "--format", "json")
    assert code == code2 == 1
    assert json.loads(out)["traces"] == json.loads(out2)["traces"]
    strong = {t["trace"]: t["verdicts"]["total-order-strong"] for t in json.loads(out)["traces"]}
    assert [t for t, v in strong.items() if v == "violated"] == ["t3", "t7", "t11"]


def test_sample_command_prints_seed(capsys, tmp_path):
    code, out, _ = run(capsys, "sample", "--out", str(tmp_path / "s.jsonl"), "--fault", "gap",
                       "--seed", "7")
    assert code == 0 and "(seed 7)" in out and "gap -> total-order-strong" in out


def test_seq_problems_are_bad_input_with_location(capsys, tmp_path):
    path = tmp_path / "seq.jsonl"
    recs = [
        {"trace": "t", "process": "p", "kind": "deliver", "msg": "a", "seq": 0},
        {"trace": "t", "process": "p", "kind": "deliver", "msg": "b", "seq": 0},
        {"trace": "u", "process": "p", "kind": "deliver", "msg": "a", "seq": 1},
        {"trace": "u", "process": "p", "kind": "deliver", "msg": "b"},
        {"trace": "v", "process": "p", "kind": "deliver", "msg": "a"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    code, _, err = run(capsys, "check", str(path))
    assert code == 2 and "field 'seq'" in err and "repeats seq 0" in err and f"{path}:2" in err
    code, out, _ = run(capsys, "check", str(path), "--keep-going", "--format", "json", "-q")
    doc = json.loads(out)
    assert code == 2
    assert [t["trace"] for t in doc["traces"]] == ["v"]  # t and u rejected whole
    assert doc["summary"]["rejected"] == 4 and doc["summary"]["accepted"] == 1
    msgs = sorted(e["message"] for e in doc["rejected"])
    assert msgs == ["process p gives seq on some events only", "process p repeats seq 0"]
    assert sorted(e["line"] for e in doc["rejected"]) == [2, 4]


def test_latency_summary_and_plot(capsys, tmp_path):
    recs, truth = faulty_trace("s", "slow", seed=2)
    path = tmp_path / "slow.jsonl"
    write_records(path, recs + clean_trace("c", seed=3))
    png = tmp_path / "lat.png"
    code, out, err = run(capsys, "check", str(path), "-q", "--format", "json",
                         "--plot-latency", str(png))
    assert code == 0  # no bound: latency is measured, and unknown
    lat = json.loads(out)["summary"]["latency"]
    slow = lat["slowest"][0]
    assert (slow["trace"], slow["msg"]) == ("s", truth["messages"][0])
    assert slow["process"] == truth["processes"][0] and slow["latency"] > truth["bound"]
    assert lat["per_process"][slow["process"]]["max"] == slow["latency"]
    assert sum(d["deliveries"] for d in lat["per_process"].values()) == lat["deliveries"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "drawn" in err


def test_merge_across_formats(capsys, tmp_path):
    # one trace split over a Parquet file (read dictionary-encoded) and a JSON Lines file
    recs, truth = faulty_trace("t", "swap", seed=2)
    procs = sorted({r["process"] for r in recs})
    a, b = tmp_path / "a.parquet", tmp_path / "b.jsonl"
    write_records(a, [r for r in recs if r["process"] in procs[:2]])
    write_records(b, [r for r in recs if r["process"] in procs[2:]])
    code, out, _ = run(capsys, "check", str(a), str(b), "--merge", "-q", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and len(doc["traces"]) == 1
    assert sorted(doc["traces"][0]["sources"]) == sorted([str(a), str(b)])
    res = next(r for r in doc["traces"][0]["results"] if r["property"] == "total-order-weak")
    assert {w["msg"] for w in res["witness"]} == set(truth["messages"])


@pytest.mark.parametrize("batch", [1 << 18, 2])
def test_broken_grouped_promise_names_the_record(capsys, tmp_path, monkeypatch, batch):
    # a trace that comes back after another started, in the same batch or a later one
    from tomkit.checker import engine

    monkeypatch.setattr(engine, "READ_ROWS", batch)
    head = {"format": "tomkit-trace", "version": 1, "grouped": True}
    recs = [{"trace": t, "process": "p", "kind": "deliver", "msg": m}
            for t, m in (("a", "x"), ("b", "x"), ("c", "x"), ("a", "y"))]
    path = tmp_path / "liar.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [head, *recs]))
    code, _, err = run(capsys, "check", str(path))
    assert code == 2 and "trace 'a' appears again" in err and f"{path}:5" in err
