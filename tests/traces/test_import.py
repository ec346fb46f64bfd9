"""`tomkit import`: third-party logs into v1 traces by a mapping (traces/importer.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from locations import ROOT

from tomkit.cli import main
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.importer import MappingError, import_logs, load_mapping
from tomkit.traces.reader import read_records

MAPPINGS = ROOT / "traces" / "mappings"


def _mapping(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "map.toml"
    p.write_text(text)
    return p


LINES = """# banner
2026-11-24T10:00:00.100Z n1 VIEW 1 members=n1,n2
2026-11-24T10:00:00.100Z n2 VIEW 1 members=n1,n2
2026-11-24T10:00:00.120Z n1 SEND n1.1 deps=

2026-11-24T10:00:00.180Z n2 DELIVER n1.1
2026-11-24T10:00:00.190Z n1 DELIVER n1.1
"""


def test_regex_log_interleaved(tmp_path):
    log = tmp_path / "a.log"
    log.write_text(LINES)
    recs, stats = import_logs(load_mapping(MAPPINGS / "line-log.toml"), [log])
    assert [(r["process"], r["kind"], r.get("msg") or r.get("view")) for r in recs] == [
        ("n1", "view", "1"), ("n2", "view", "1"), ("n1", "send", "n1.1"),
        ("n2", "deliver", "n1.1"), ("n1", "deliver", "n1.1")]
    assert recs[0]["members"] == ["n1", "n2"] and "deps" not in recs[2]
    assert recs[3]["time"] - recs[2]["time"] == pytest.approx(0.06, abs=1e-6)
    assert [r["seq"] for r in recs] == [0, 0, 1, 1, 2]
    assert (stats.read, stats.records, stats.skipped, stats.blank) == (7, 5, 1, 1)


def test_bad_lines_stop_or_are_counted(tmp_path, capsys):
    log = tmp_path / "a.log"
    log.write_text(LINES + "not an event\n2026-11-24T10:00:01Z n2 DELIVER\n"
                   "yesterday n1 SEND n1.2\n")
    m = load_mapping(MAPPINGS / "line-log.toml")
    with pytest.raises(TraceFormatError) as e:
        import_logs(m, [log])
    assert e.value.location.line == 8 and "does not match" in e.value.message
    recs, stats = import_logs(m, [log], keep_going=True)
    assert [(x.location.line, x.field) for x in stats.rejected] == [
        (8, None), (9, "msg"), (10, "time")]
    assert stats.read == stats.records + len(stats.rejected) + stats.skipped + stats.blank
    out = tmp_path / "t.jsonl"
    args = ["import", "--mapping", str(MAPPINGS / "line-log.toml"), str(log), "--out",
            str(out)]
    assert main(args) == 2 and not out.exists()
    assert main(args + ["--keep-going"]) == 2
    text = capsys.readouterr()
    assert "10 lines read from 1 file(s): 5 records, 3 rejected, 1 skipped" in text.out
    assert "a.log:9: field 'msg'" in text.err
    assert len(read_records(out)) == 5


def test_csv_log_with_lists_and_milliseconds(tmp_path):
    log = tmp_path / "h.csv"
    log.write_text("time_ms,node,event,message,acks\n120,n1,send,n1.7,n2.3;n1.6\n"
                   "180,n2,deliver,n1.7,\n,n2,oops,x,\n")
    m = load_mapping(MAPPINGS / "csv-log.toml")
    recs, stats = import_logs(m, [log], keep_going=True)
    assert recs[0] == {"trace": "csv-log", "process": "n1", "kind": "send", "msg": "n1.7",
                       "deps": ["n2.3", "n1.6"], "time": pytest.approx(0.12), "seq": 0}
    assert [(x.location.line, x.field) for x in stats.rejected] == [(4, "kind")]


def test_one_file_per_process_and_extension_fields(tmp_path):
    for p, rows in {"n1": [("SEND", "m1"), ("DELIVER", "m1")],
                    "n2": [("DELIVER", "m1")]}.items():
        (tmp_path / f"node-{p}.jsonl").write_text("".join(
            json.dumps({"ts": 1.0 + k, "type": t, "id": i, "extra": k}) + "\n"
            for k, (t, i) in enumerate(rows)))
    m = load_mapping(MAPPINGS / "per-process-jsonl.toml")
    recs, _ = import_logs(m, sorted(tmp_path.glob("node-*.jsonl")))
    assert [(r["process"], r["kind"], r["x_extra"]) for r in recs] == [
        ("n1", "send", 0), ("n1", "deliver", 1), ("n2", "deliver", 0)]
    with pytest.raises(TraceFormatError, match="file name does not match"):
        import_logs(m, [tmp_path / "node-n1.jsonl", __file__])


def test_strptime_times_and_renamed_trace(tmp_path):
    m = _mapping(tmp_path, """
format = "jsonl"
[fields]
trace = "run"
process = "who"
kind = "what"
msg = "id"
time = "when"
[time]
format = "%d/%m/%Y %H:%M:%S"
""")
    log = tmp_path / "x.jsonl"
    log.write_text('{"run": "r1", "who": "p", "what": "send", "id": "a", '
                   '"when": "24/11/2026 10:00:01"}\n'
                   '{"run": "r1", "who": "p", "what": "deliver", "id": "a", '
                   '"when": "24/11/2026 10:00:03"}\n')
    recs, _ = import_logs(load_mapping(m), [log])
    assert recs[1]["time"] - recs[0]["time"] == 2 and recs[0]["trace"] == "r1"


@pytest.mark.parametrize("text,why", [
    ('format = "xml"', "format must be one of"),
    ('format = "jsonl"\ntrace = "t"\nwhat = 1\n[fields]\nkind = "k"\nprocess = "p"',
     "unknown key 'what'"),
    ('format = "jsonl"\ntrace = "t"\n[fields]\nprocess = "p"', "'kind' must be mapped"),
    ('format = "jsonl"\n[fields]\nkind = "k"\nprocess = "p"', "constant 'trace'"),
    ('format = "jsonl"\ntrace = "t"\n[fields]\nkind = "k"', "process comes from"),
    ('format = "jsonl"\ntrace = "t"\n[fields]\nkind = "k"\nprocess = "p"\nseq = "s"',
     "'seq' is not a v1 field"),
    ('format = "regex"\nregex = "(unclosed"\ntrace = "t"\n[fields]\nkind = "k"\n'
     'process = "p"', "not a regular expression"),
    ('format = "regex"\nregex = "(?<k>x)"\ntrace = "t"\n[fields]\nkind = "k"\n'
     'process = "p"', "no group named 'p'"),
    ('format = "jsonl"\ntrace = "t"\n[fields]\nkind = "k"\nprocess = "p"\n[kinds]\n'
     'S = "sent"', "not a kind"),
    ('format = "jsonl"\ntrace = "t"\n[fields]\nkind = "k"\nprocess = "p"\n[time]\n'
     'format = "fortnights"', "not one of"),
    ("format = ", "not TOML"),
])
def test_bad_mappings_name_file_and_key(tmp_path, text, why):
    p = _mapping(tmp_path, text)
    with pytest.raises(MappingError, match=why) as e:
        load_mapping(p)
    assert str(p) in str(e.value)


def test_round_trip_of_a_simulated_trace_through_a_csv_log(tmp_path):
    import tomkit

    run = tomkit.simulate("toto", n=3, messages=12, seed=4, delta=2)
    want = [{k: r[k] for k in ("process", "kind", "msg", "time") if k in r}
            | ({"deps": r["deps"]} if r.get("deps") else {})
            for r in run.records if r["kind"] in ("send", "deliver")]
    log = tmp_path / "sim.csv"
    with open(log, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time_ms", "node", "event", "message", "acks"])
        for r in want:
            w.writerow([repr(r["time"] * 1000), r["process"], r["kind"], r["msg"],
                        ";".join(r.get("deps", []))])
    out = tmp_path / "back.parquet"
    assert main(["import", "--mapping", str(MAPPINGS / "csv-log.toml"), str(log),
                 "--out", str(out)]) == 0
    got = [{k: r[k] for k in ("process", "kind", "msg", "time", "deps") if k in r}
           for r in read_records(out)]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a["time"] == pytest.approx(b["time"])
        assert {**a, "time": 0} == {**b, "time": 0}
    assert main(["check", str(out), "-q", "-p", "causal-order,fifo-order"]) == 0


def test_the_jgroups_members_raw_output(tmp_path):
    lines = {"j1": ['{"ev":"ready","time":1.0}',
                    '{"ev":"view","time":1.1,"view":"j1|1","members":["j1","j2"]}',
                    '{"ev":"send","time":1.2,"msg":"j1.0"}',
                    '{"ev":"deliver","time":1.3,"from":"j1","msg":"j1.0"}',
                    '{"ev":"done","time":2.0}'],
             "j2": ['{"ev":"view","time":1.1,"view":"j1|1","members":["j1","j2"]}',
                    '{"ev":"deliver","time":1.4,"from":"j1","msg":"j1.0"}']}
    for name, ls in lines.items():
        (tmp_path / f"{name}.events").write_text("\n".join(ls) + "\n")
    m = load_mapping(MAPPINGS / "jgroups-member.toml")
    recs, stats = import_logs(m, sorted(tmp_path.glob("*.events")))
    assert stats.skipped == 2 and not stats.rejected
    assert [(r["process"], r["kind"]) for r in recs] == [
        ("j1", "view"), ("j1", "send"), ("j1", "deliver"), ("j2", "view"), ("j2", "deliver")]
    assert recs[0]["members"] == ["j1", "j2"] and recs[0]["view"] == "j1|1"


def test_round_trip_of_a_simulated_trace_through_a_line_log(tmp_path):
    import datetime

    import tomkit

    run = tomkit.simulate("toto", n=3, messages=12, seed=5, delta=2)
    want = [r for r in run.records if r["kind"] in ("send", "deliver")]
    t0 = 1_790_000_000.0  # whole seconds: the ISO text keeps microseconds

    def iso(t: float) -> str:
        return datetime.datetime.fromtimestamp(t0 + t, datetime.timezone.utc).isoformat()

    log = tmp_path / "sim.log"
    log.write_text("".join(
        f"{iso(r['time'])} {r['process']} {r['kind'].upper()} {r['msg']}"
        + (f" deps={','.join(r['deps'])}" if r["kind"] == "send" else "") + "\n"
        for r in want))
    recs, stats = import_logs(load_mapping(MAPPINGS / "line-log.toml"), [log])
    assert stats.records == len(want) and not stats.rejected
    for got, w in zip(recs, want):
        assert (got["process"], got["kind"], got["msg"], got.get("deps", [])) == (
            w["process"], w["kind"], w["msg"], w.get("deps", []) if w["kind"] == "send" else [])
        assert got["time"] - t0 == pytest.approx(w["time"], abs=1e-5)
