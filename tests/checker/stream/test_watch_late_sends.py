"""``tomkit watch`` with a slow per-process log (checker/stream/watch.py, canon.py's
awaited sends): a sender's log written long after the others' deliveries of its
messages no longer holds the window; its positions retire once the FIFO pointer is
``WATCH_AWAIT_AFTER`` behind, their sends awaited as ``tomkit check --stream`` awaits
them. Bounded held records, the verdicts of ``tomkit import`` + ``tomkit check``,
printed once across a restart on ``--state``, and an older checkpoint taken up or
refused in one line."""

from __future__ import annotations

import io
import pickle
import random

import pytest
from test_stream_watch_mapping import (
    DEFAULT,
    PER_PROCESS,
    per_process_logs,
    without_locations,
)
from test_stream_watch_mapping import watch as watch_logs

import tomkit.checker.stream.canon as canon
from tomkit.checker.engine import check_paths
from tomkit.checker.properties import Options, properties
from tomkit.checker.stream import watch as watch_mod
from tomkit.checker.stream.canon import FAST, WHOLE
from tomkit.traces.importer import import_logs, load_mapping
from tomkit.traces.writer import write_records

N, PROCS = 480, 4
SLOW = "p3"  # the slow log: a sender, and a deliverer
PROPS = DEFAULT + [properties()["fifo-order"]]


def watch(tmp_path, mapping: str, logs: list[str], **kw):
    return watch_logs(tmp_path, mapping, logs, PROPS, **kw)


def imported_check(tmp_path, mapping_path, paths):
    """``tomkit import`` + ``tomkit check`` of the complete logs: the oracle."""
    recs, _ = import_logs(load_mapping(mapping_path), paths)
    out = tmp_path / "imported.jsonl"
    write_records(out, recs)
    return check_paths([out], PROPS, Options())


def run_records(fault: str | None = None) -> list[dict]:
    """Every process sends in turn (m_i by p(i mod 4)) and all deliver in send order.
    ``fault``: p1 swaps its deliveries 10 and 11 (``swap-early``: before the slow log's
    sends are awaited) or 400 and 401 (``swap-late``: after); the slow sender sends m7
    before m3 (``fifo``) or m5 again at its end (``twice``); m302's send is missing
    (``unsent``); the slow process swaps its deliveries 200 and 201 (``slow-swap``)."""
    sends = {p: [] for p in range(PROCS)}
    for i in range(N):
        if not (fault == "unsent" and i == 302):
            sends[i % PROCS].append(f"m{i}")
    if fault == "fifo":
        s = sends[3]
        s[0], s[1] = s[1], s[0]  # m3 and m7
    if fault == "twice":
        sends[3].append("m5")
    recs = []
    for p in range(PROCS):
        order = [f"m{i}" for i in range(N)]
        at = {"swap-early": (1, 10), "swap-late": (1, 400), "slow-swap": (3, 200)}.get(
            fault or "")
        if at and at[0] == p:
            k = at[1]
            order[k], order[k + 1] = order[k + 1], order[k]
        # each send right before the process's delivery of its own message
        mine = list(sends[p])
        for m in order:
            while mine and int(mine[0][1:]) <= int(m[1:]):
                recs.append({"trace": "run", "process": f"p{p}", "kind": "send",
                             "msg": mine.pop(0)})
            recs.append({"trace": "run", "process": f"p{p}", "kind": "deliver", "msg": m})
        recs += [{"trace": "run", "process": f"p{p}", "kind": "send", "msg": m}
                 for m in mine]
    return recs


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(watch_mod, "WATCH_TRIM_AT", 16)
    monkeypatch.setattr(watch_mod, "WATCH_AWAIT_AFTER", 64)


def grow(tmp_path, logs: dict[str, list[str]], w, rounds: int = 8,
         slow_rounds: int = 2) -> list[int]:
    """The fast logs in ``rounds`` shares, a cycle after each; then the slow log in
    ``slow_rounds`` shares. The records held after each cycle."""
    held = []

    def write(p: str, lines: list[str], j: int, n: int) -> None:
        with open(tmp_path / f"node-{p}.jsonl", "a") as f:
            f.write("".join(lines[len(lines) * j // n:len(lines) * (j + 1) // n]))

    for j in range(rounds):
        for p, lines in logs.items():
            if p != SLOW:
                write(p, lines, j, rounds)
        w.cycle()
        held.append(sum(s.held() for s in w.run.states.values()))
    for j in range(slow_rounds):
        write(SLOW, logs[SLOW], j, slow_rounds)
        w.cycle()
        held.append(sum(s.held() for s in w.run.states.values()))
    return held


def names(logs) -> list[str]:
    return [f"node-{p}.jsonl" for p in sorted(logs)]


def test_a_slow_senders_log_holds_no_window(small, tmp_path):
    logs = per_process_logs(run_records())
    w, paths = watch(tmp_path, PER_PROCESS, names(logs), out=io.StringIO(), timeout=3600.0)
    held = grow(tmp_path, logs, w, slow_rounds=4)
    st = w.run.states["run"]
    assert st.mode == FAST and st.waited and st.lagged
    # 480 positions, 1,920 records; the window waits 64 positions for a late send
    assert max(held) < 3 * (64 + 2 * 16) + 200, held
    report = w.finish()
    assert report.exit_code() == 0
    assert without_locations(report) == without_locations(
        imported_check(tmp_path, tmp_path / "map.toml", paths))


def test_as_before_the_window_held_every_position(small, tmp_path, monkeypatch):
    """The test's teeth: with the sends not awaited (as watch was), the window holds
    every position the fast logs deliver while the slow log is late."""
    monkeypatch.setattr(canon, "AWAIT_SENDS", False)
    logs = per_process_logs(run_records())
    w, _ = watch(tmp_path, PER_PROCESS, names(logs), out=io.StringIO())
    held = grow(tmp_path, logs, w)
    assert max(held) > 3 * N * 3 // 4
    assert w.finish().exit_code() == 0


def test_the_slow_process_backlog_is_pending(small, tmp_path):
    """A correct process lagging behind the retired prefix has not delivered it: the
    summary's pending messages count it (watch.py: ``behind``)."""
    logs = per_process_logs(run_records())
    w, _ = watch(tmp_path, PER_PROCESS, names(logs), out=io.StringIO(), timeout=3600.0)
    grow(tmp_path, logs, w, slow_rounds=0)
    # half of the slow log: it has read part of the retired prefix back
    lines = logs[SLOW]
    with open(tmp_path / f"node-{SLOW}.jsonl", "w") as f:
        f.write("".join(lines[:len(lines) // 2]))
    w.cycle()
    st = w.run.states["run"]
    p3 = st.procs[SLOW]
    assert 0 < st.cursor[p3] < st.base
    assert w.pending()["messages"] >= st.base - st.cursor[p3] > 0
    with open(tmp_path / f"node-{SLOW}.jsonl", "a") as f:
        f.write("".join(lines[len(lines) // 2:]))
    w.cycle()
    assert w.pending()["messages"] == 0
    assert w.finish().exit_code() == 0


@pytest.mark.parametrize("fault", ["swap-early", "swap-late", "fifo", "twice", "unsent",
                                   "slow-swap"])
def test_faults_give_check_s_verdicts(fault, small, tmp_path):
    logs = per_process_logs(run_records(fault))
    out = io.StringIO()
    w, paths = watch(tmp_path, PER_PROCESS, names(logs), out=out)
    grow(tmp_path, logs, w)
    early = out.getvalue()
    st = w.run.states["run"]
    if fault == "swap-early":
        # broken in the window, before any send was awaited: judged as it came
        assert not st.waited and "violated" in early
    elif fault != "unsent":  # (a send that never comes is known missing at the end)
        # broken after positions retired before their sends: judged whole at the end
        assert st.mode == WHOLE and st.base > 0
    report = w.finish()
    want = imported_check(tmp_path, tmp_path / "map.toml", paths)
    assert report.exit_code() == want.exit_code() == 1
    assert without_locations(report) == without_locations(want)
    printed = out.getvalue()
    for o in want.outcomes:
        for name, r in o.results.items():
            if str(r.verdict) == "violated":
                assert printed.count(f"run: {name} violated") == 1, (name, printed)


@pytest.mark.parametrize("fault", [None, "swap-early", "swap-late", "fifo"])
def test_killed_at_random_points_it_loses_nothing_and_judges_nothing_twice(fault, small,
                                                                          tmp_path):
    """Killed after random cycles, some of them past the last checkpoint (their output
    is cut back to the checkpoint's length and their records read again), and restarted
    on the state while the slow log is late and its sends awaited, until the logs are
    complete: every violation written once, check's report."""
    logs = per_process_logs(run_records(fault))
    state, out = tmp_path / "state", tmp_path / "out.txt"
    rng = random.Random(1)  # 5 kills in the 12 cycles, 4 of them losing cycles

    def start():
        return watch(tmp_path, PER_PROCESS, names(logs), out_path=str(out),
                     state_dir=str(state), checkpoint_every=0.0)[0]

    def write(ps, j, n):
        for p in ps:
            lines = logs[p]
            with open(tmp_path / f"node-{p}.jsonl", "a") as f:
                f.write("".join(lines[len(lines) * j // n:len(lines) * (j + 1) // n]))

    w, kills, waited = start(), 0, False
    fast = [p for p in logs if p != SLOW]
    for ps, j, n in [(fast, j, 8) for j in range(8)] + [([SLOW], j, 4) for j in range(4)]:
        write(ps, j, n)
        # a checkpoint after this cycle, or none (a kill then loses the cycle)
        w.checkpoint_every = 0.0 if rng.random() < 0.5 else 1e9
        w.cycle()
        waited |= any(st.waited for st in w.run.states.values())
        if rng.random() < 0.4:
            w.close()  # killed: nothing more written
            w, kills = start(), kills + 1
    w.cycle()  # what a restart has still to read again, before its idle exit
    report = w.finish()
    w.close()
    assert kills >= 2 and waited == (fault != "swap-early")
    want = imported_check(tmp_path, tmp_path / "map.toml", names_in(tmp_path, logs))
    assert report.exit_code() == want.exit_code()
    assert without_locations(report) == without_locations(want)
    text = out.read_text()
    for o in want.outcomes:
        for name, r in o.results.items():
            if str(r.verdict) == "violated":
                assert text.count(f"run: {name} violated") == 1, (name, text)
    assert ("violated" in text) == (fault is not None)


def names_in(tmp_path, logs) -> list[str]:
    return [str(tmp_path / n) for n in names(logs)]


def test_an_older_checkpoint_is_taken_up_and_an_unknown_one_refused(small, tmp_path):
    logs = per_process_logs(run_records("fifo"))
    state = tmp_path / "state"
    w, paths = watch(tmp_path, PER_PROCESS, names(logs), out=io.StringIO(),
                     state_dir=str(state), checkpoint_every=0.0)
    for p in logs:
        if p != SLOW:
            with open(tmp_path / f"node-{p}.jsonl", "w") as f:
                f.write("".join(logs[p][:len(logs[p]) // 8]))
    w.cycle()
    w.close()
    path = state / watch_mod.STATE_FILE
    data = pickle.loads(path.read_bytes())
    # as tomkit wrote it before the sends were awaited in watch: version 4, no margin
    data["version"] = 4
    for st in data["states"].values():
        st.__dict__.pop("await_after", None)
    path.write_bytes(pickle.dumps(data))
    w, _ = watch(tmp_path, PER_PROCESS, names(logs), out=io.StringIO(),
                 state_dir=str(state))
    assert all(st.await_after == 64 for st in w.run.states.values())
    grow(tmp_path, {p: (ls[len(ls) // 8:] if p != SLOW else ls) for p, ls in logs.items()},
         w, rounds=1, slow_rounds=1)
    report = w.finish()
    assert without_locations(report) == without_locations(
        imported_check(tmp_path, tmp_path / "map.toml", paths))
    data["version"] = 3
    path.write_bytes(pickle.dumps(data))
    with pytest.raises(ValueError, match=r"checkpoint of format 3.*new --state DIR") as e:
        watch(tmp_path, PER_PROCESS, names(logs), out=io.StringIO(), state_dir=str(state))
    assert "\n" not in str(e.value)
