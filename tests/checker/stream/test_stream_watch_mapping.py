"""tomkit watch --mapping (checker/stream/follow.py: MappedFollower; traces/importer.py:
LiveImport): per-process logs read as ``tomkit import`` reads them while they grow, one
of them lagging; verdicts as tomkit check gives them on the imported trace, witnesses
located at the logs' own lines."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream.canon import FAST
from tomkit.checker.stream.watch import Watch
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.generate import faulty_trace
from tomkit.traces.importer import import_logs, load_mapping
from tomkit.traces.writer import write_records

DEFAULT = [p for p in properties().values() if p.default]

PER_PROCESS = """format = "jsonl"
trace = "run"
extensions = true
[file]
process = 'node-(?<process>[^.]+)\\.jsonl'
[fields]
kind = "type"
msg = "id"
time = "ts"
[kinds]
SEND = "send"
RECV = "recv"
DELIVER = "deliver"
CRASH = "crash"
"""

CSV = """format = "csv"
trace = "run"
[fields]
process = "node"
kind = "event"
msg = "id"
[kinds]
S = "send"
D = "deliver"
"""


def per_process_logs(recs: list[dict]) -> dict[str, list[str]]:
    """A generated trace as one log per process, lines in the mapping's own words."""
    logs: dict[str, list[str]] = {}
    for r in recs:
        line = {"ts": r.get("time"), "type": r["kind"].upper(), "note": "x"}
        if "msg" in r:
            line["id"] = r["msg"]
        logs.setdefault(r["process"], []).append(json.dumps(line) + "\n")
    return logs


def grow(tmp_path, logs: dict[str, list[str]], w: Watch, *, lagging: str | None,
         rounds: int = 8, lag_rounds: int = 4) -> list[int]:
    """Append each log in ``rounds`` shares, ``lagging``'s only ``lag_rounds`` rounds
    late (its file does not exist before); a watch cycle after each round. The records
    held after each cycle."""
    held = []
    for k in range(rounds + lag_rounds + 1):
        for p, lines in logs.items():
            j = k - (lag_rounds if p == lagging else 0)
            if j < 0:
                continue
            a, b = len(lines) * j // rounds, len(lines) * (j + 1) // rounds
            with open(tmp_path / f"node-{p}.jsonl", "a") as f:
                f.write("".join(lines[a:b]))
        w.cycle()
        held.append(sum(s.held() for s in w.run.states.values()))
    return held


def imported_check(tmp_path, mapping_path, paths):
    recs, _ = import_logs(load_mapping(mapping_path), paths)
    out = tmp_path / "imported.jsonl"
    write_records(out, recs)
    return check_paths([out], DEFAULT, Options())


def without_locations(report) -> dict:
    out = {}
    for o in report.outcomes:
        res = {}
        for k, r in o.results.items():
            d = r.to_dict()
            for w in d.get("witness", []):
                w.pop("source", None)
                w.pop("line", None)
            res[k] = d
        out[o.trace] = ({k: str(v) for k, v in o.verdicts.items()}, res)
    return out


def watch(tmp_path, mapping_text: str, names: list[str], props=DEFAULT,
          **kw) -> tuple[Watch, list[str]]:
    mp = tmp_path / "map.toml"
    mp.write_text(mapping_text)
    paths = [str(tmp_path / n) for n in names]
    return Watch(paths, props, Options(), mapping=load_mapping(mp), **kw), paths


@pytest.mark.parametrize("fault", ["swap", "gap", "duplicate-delivery", "unsent-delivery",
                                   "cycle3", "fifo"])
def test_per_process_logs_with_one_lagging_give_check_s_verdicts(tmp_path, fault):
    recs, _ = faulty_trace("run", fault, seed=3, n_messages=40)
    logs = per_process_logs(recs)
    lagging = sorted(logs)[-1]
    out = io.StringIO()
    w, paths = watch(tmp_path, PER_PROCESS, [f"node-{p}.jsonl" for p in sorted(logs)],
                     out=out)
    grow(tmp_path, logs, w, lagging=lagging)
    report = w.finish()
    want = imported_check(tmp_path, tmp_path / "map.toml", paths)
    assert report.exit_code() == want.exit_code() == (0 if fault == "fifo" else 1)
    assert without_locations(report) == without_locations(want)
    # every witness names a log and a line of it that holds that very event
    for o in report.outcomes:
        for r in o.results.values():
            for ev in r.witness:
                line = open(ev.location.source).read().splitlines()[ev.location.line - 1]
                assert json.loads(line)["type"] == ev.kind.upper()
                assert ev.location.source.endswith(f"node-{ev.process}.jsonl")
    assert bool(out.getvalue()) == (fault != "fifo")  # the violations were printed


def test_a_lagging_log_reads_the_retired_prefix_from_disk(tmp_path, monkeypatch):
    from tomkit.checker.stream import watch as watch_mod

    monkeypatch.setattr(watch_mod, "WATCH_TRIM_AT", 16)
    # p0 sends every message, everyone delivers them in order; p3 only delivers, and its
    # log starts late (a sender's log that lags holds the window up to watch's margin:
    # its sends do; test_watch_late_sends.py)
    recs = [{"trace": "run", "process": "p0", "kind": k, "msg": f"m{i}"}
            for i in range(400) for k in ("send", "deliver")]
    recs += [{"trace": "run", "process": p, "kind": "deliver", "msg": f"m{i}"}
             for p in ("p1", "p2", "p3") for i in range(400)]
    logs = per_process_logs(recs)
    lagging = "p3"
    w, paths = watch(tmp_path, PER_PROCESS, [f"node-{p}.jsonl" for p in sorted(logs)],
                     out=io.StringIO())
    held = grow(tmp_path, logs, w, lagging=lagging, rounds=16, lag_rounds=4)
    st = w.run.states["run"]
    # the late log stays in the pass: it reads the retired prefix from disk when it
    # comes (retired.py), so while it lags the held records stay a few windows
    assert st.mode == FAST and st.base > 0
    assert max(held) < 4 * 16 * 4  # 4 logs, a window of 16 positions, a few windows
    report = w.finish()
    assert report.exit_code() == 0
    assert without_locations(report) == without_locations(
        imported_check(tmp_path, tmp_path / "map.toml", paths))


def test_a_violation_is_printed_while_the_logs_grow(tmp_path):
    recs, _ = faulty_trace("run", "swap", seed=1, n_messages=60)
    logs = per_process_logs(recs)
    out = io.StringIO()
    w, _ = watch(tmp_path, PER_PROCESS, [f"node-{p}.jsonl" for p in sorted(logs)], out=out)
    grow(tmp_path, logs, w, lagging=None, rounds=4, lag_rounds=0)
    printed = out.getvalue()
    assert "violated" in printed
    n = printed.count("\n")
    w.finish()
    assert out.getvalue().count("violated") == printed.count("violated")  # none twice
    assert out.getvalue().count("\n") >= n


def test_a_bad_line_names_the_log_line_and_field(tmp_path):
    (tmp_path / "node-p1.jsonl").write_text(
        '{"ts": 1, "type": "SEND", "id": "a"}\n{"ts": 2, "type": "JUMP", "id": "a"}\n')
    w, _ = watch(tmp_path, PER_PROCESS, ["node-p1.jsonl"], out=io.StringIO())
    with pytest.raises(TraceFormatError) as e:
        w.cycle()
    assert e.value.location.line == 2 and e.value.field == "kind"
    assert str(e.value.location).endswith("node-p1.jsonl:2")
    # keep going: counted and reported, the rest read
    w, _ = watch(tmp_path, PER_PROCESS, ["node-p1.jsonl"], out=io.StringIO(),
                 keep_going=True)
    w.cycle()
    report = w.finish()
    assert [err.location.line for err in report.rejected] == [2]
    assert report.files[0].accepted == 1 and report.files[0].rejected == 1


def test_a_file_name_the_mapping_does_not_match_is_refused(tmp_path):
    with pytest.raises(TraceFormatError, match="does not match"):
        watch(tmp_path, PER_PROCESS, ["other.log"], out=io.StringIO())


def test_csv_header_and_quoted_newlines_across_reads_and_a_restart(tmp_path):
    rows = ['node,event,id,note\n', 'p1,S,a,"two\nlines"\n', 'p1,D,a,x\n',
            'p2,D,a,"y"\n', 'p2,S,b,z\n', 'p2,D,b,z\n', 'p1,D,b,"q""uote"\n']
    text = "".join(rows)
    path = tmp_path / "log.csv"
    state = tmp_path / "state"
    out = tmp_path / "verdicts.jsonl"
    # cut inside the quoted field, and again inside a later one
    cuts = [len(rows[0]) + 8, text.index("q") + 1, len(text)]
    done = 0
    for k, cut in enumerate(cuts):
        with open(path, "a") as f:
            f.write(text[done:cut])
        done = cut
        # a new watch each time, on the same state: the header is kept across restarts
        w, _ = watch(tmp_path, CSV, ["log.csv"], out_path=str(out), state_dir=str(state),
                     fmt="json")
        w.cycle()
        if k < len(cuts) - 1:
            w.checkpoint()
            w.close()
    report = w.finish()
    w.close()
    want = imported_check(tmp_path, tmp_path / "map.toml", [str(path)])
    assert without_locations(report) == without_locations(want)
    assert report.files[0].accepted == 6 and not report.rejected
    assert report.exit_code() == 0


def test_cli_watch_mapping_exit_code_and_report(tmp_path):
    recs, _ = faulty_trace("run", "swap", seed=2, n_messages=20)
    logs = per_process_logs(recs)
    for p, lines in logs.items():
        (tmp_path / f"node-{p}.jsonl").write_text("".join(lines))
    (tmp_path / "map.toml").write_text(PER_PROCESS)
    cmd = [sys.executable, "-m", "tomkit", "watch", "--mapping", str(tmp_path / "map.toml"),
           "--idle-exit", "0.5", "--summary-every", "0", "--format", "json",
           *[str(tmp_path / f"node-{p}.jsonl") for p in sorted(logs)]]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stderr
    assert '"verdict": "violated"' in res.stdout
    (tmp_path / "bad.toml").write_text("format = 'xml'\n")
    cmd[cmd.index(str(tmp_path / "map.toml"))] = str(tmp_path / "bad.toml")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "bad mapping" in res.stderr and "bad.toml" in res.stderr


@pytest.mark.parametrize("fault", ["lost", "uniform"])
def test_an_end_of_trace_violation_is_read_again_through_the_mapping(tmp_path, fault):
    """A liveness violation's witness needs the whole trace: the logs are read again
    through the mapping, as they were followed (lines and seq alike)."""
    live = [properties()[n] for n in ("integrity", "agreement", "validity", "liveness")]
    recs, _ = faulty_trace("run", fault, seed=6, n_messages=30)
    logs = per_process_logs(recs)
    w, paths = watch(tmp_path, PER_PROCESS, [f"node-{p}.jsonl" for p in sorted(logs)],
                     live, out=io.StringIO())
    grow(tmp_path, logs, w, lagging=sorted(logs)[1], rounds=4, lag_rounds=1)
    report = w.finish()
    recs2, _ = import_logs(load_mapping(tmp_path / "map.toml"), paths)
    out = tmp_path / "imported.jsonl"
    write_records(out, recs2)
    want = check_paths([out], live, Options())
    assert {str(r.verdict) for k, r in report.outcomes[0].results.items()
            if k in ("agreement", "validity", "liveness")} == {"violated"}
    assert report.exit_code() == want.exit_code() == 1
    assert without_locations(report) == without_locations(want)
