"""A process that only sends (a client, a producer: Maelstrom's clients) does not hold the
low watermark without views (checker/stream/canon.py's ``_trim``, ``SENDERS_PASS``),
once S's end is two windows past it: seen before the
first trim with nothing delivered, its cursor stayed at 0 and nothing retired, so the
whole trace stayed in memory. Now it is passed as a process not seen yet is, and reads
the retired prefix from disk if it comes to deliver. Bounded positions held, and the
whole-trace checker's report (stream_oracle.py) on runs with one and two such processes:
clean, with each order fault early, in the middle and late, with end-of-trace faults and
``--liveness``, both layouts, both scopes, with views (where it still holds it), and a
client that delivers after all (from disk, and otherwise than the others)."""

from __future__ import annotations

import pytest
from stream_oracle import CORRECT, STREAMED, agree, by_process
from test_stream_behind import views_run

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.check_run import plan
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run
from tomkit.traces.writer import write_records

WINDOW = 4
#: the default properties with ``--liveness``'s end-of-trace ones
LIVE = Options()
ALL = plan(LIVE, liveness=True).properties
N = 48


@pytest.fixture
def window(monkeypatch):
    """A window of 4 positions, 8 records a read: positions retire from the start."""
    monkeypatch.setattr(canon, "TRIM_AT", WINDOW)
    monkeypatch.setattr(driver, "READ_ROWS", 8)


def run_with_clients(n: int = N, clients: int = 1, fault: str = "none", at: int = 0,
                     client_delivers: str | None = None) -> list[dict]:
    """n messages sent in turn by p0 and the clients c0.. (which deliver nothing), each
    delivered by p0, p1, p2 right after its send. ``fault`` at message ``at``: ``swap``
    p1 delivers it and the next the other way round, ``repeat`` p2 delivers it twice,
    ``gap`` p2 skips it, ``twice`` its sender sends it again, ``short`` p2 delivers
    nothing from it on. ``client_delivers``: c0 delivers every message at the end, in
    order (``order``) or with two swapped (``swap``, at ``at``)."""
    senders = ["p0"] + [f"c{j}" for j in range(clients)]
    out: list[dict] = []
    for i in range(n):
        s = senders[i % len(senders)]
        out.append({"trace": "t", "process": s, "kind": "send", "msg": f"m{i}"})
        if fault == "twice" and i == at:
            out.append({"trace": "t", "process": s, "kind": "send", "msg": f"m{i}"})
        for p in ("p0", "p1", "p2"):
            if p == "p2" and ((fault == "gap" and i == at) or (fault == "short" and i >= at)):
                continue
            out.append({"trace": "t", "process": p, "kind": "deliver", "msg": f"m{i}"})
            if p == "p2" and fault == "repeat" and i == at:
                out.append(dict(out[-1]))
    if fault == "swap":
        d = [r for r in out if r["process"] == "p1" and r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    if client_delivers:
        order = [f"m{i}" for i in range(n)]
        if client_delivers == "swap":
            order[at], order[at + 1] = order[at + 1], order[at]
        out += [{"trace": "t", "process": "c0", "kind": "deliver", "msg": m} for m in order]
    return out


def checked(tmp_path, recs: list[dict], grouped: bool, props=STREAMED,
            options: Options = Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (what it held)."""
    path = tmp_path / "t.jsonl"
    write_records(path, by_process(recs) if grouped else recs)
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


@pytest.mark.parametrize("clients", [1, 2])
def test_clean_runs_hold_a_window_not_the_trace(clients, window, tmp_path, monkeypatch):
    """Interleaved, with every property (liveness too) and in the correct scope: a
    client seen from the first rows holds nothing; as before, it held every position."""
    recs = run_with_clients(clients=clients)
    run = checked(tmp_path, recs, False, ALL, LIVE)
    assert run.modes == {"fast": 1}, run.modes
    assert run.peak_window <= 4 * WINDOW, run.peak_window
    checked(tmp_path, recs, False, CORRECT, Options(scope="correct"))
    monkeypatch.setattr(canon, "SENDERS_PASS", False)
    before = checked(tmp_path, recs, False, ALL, LIVE)
    assert before.peak_window >= N - 1, before.peak_window


#: each planted fault early (before anything retired), in the middle and late; the
#: faults that hold no window of their own early and late too
FAULTS = [(f, at) for f in ("swap", "gap") for at in (2, N // 2, N - 3)] + \
    [(f, N // 2) for f in ("repeat", "twice", "short")]


@pytest.mark.parametrize("fault,at", FAULTS)
@pytest.mark.parametrize("grouped", [False, True], ids=["interleaved", "grouped"])
def test_faults_early_middle_late(fault, at, grouped, window, tmp_path):
    """Each planted fault with one client (two for the swap), both layouts, both scopes:
    the whole-trace checker's report; interleaved, positions retire past the client."""
    recs = run_with_clients(clients=2 if fault == "swap" else 1, fault=fault, at=at)
    run = checked(tmp_path, recs, grouped, ALL, LIVE)
    if not grouped and at > WINDOW and fault != "short":  # (p2 stalled holds it)
        assert run.peak_window <= 4 * WINDOW, run.peak_window
    checked(tmp_path, recs, grouped, CORRECT, Options(scope="correct"))


@pytest.mark.parametrize("how", ["order", "swap"])
@pytest.mark.parametrize("at", [3, N - 3])
def test_a_client_that_delivers_after_all(how, at, window, tmp_path):
    """c0 delivers every message at the end: its first deliveries lie in the retired
    prefix and are read back from disk (clean: in the pass, memory the window's), or
    otherwise than the others there (the whole-trace engine's report)."""
    recs = run_with_clients(client_delivers=how, at=at)
    run = checked(tmp_path, recs, False, ALL, LIVE)
    if how == "order":
        assert run.modes == {"fast": 1} and not run.whole, run.modes
        assert run.peak_window <= 4 * WINDOW, run.peak_window
    else:  # not S[k] at a retired position: the exact checks need the retired records
        assert run.whole, run.modes


@pytest.mark.parametrize("stop", [None, ("p2", 20)])
def test_with_views_a_member_that_only_sends(stop, window, tmp_path):
    """Two views of 30 messages, c0 a member of each that sends its turn and delivers
    nothing (and p2 stops delivering, an end-of-trace fault): the whole-trace checker's
    report. With views c0 still holds its view's range (a break after it was passed
    would go whole: canon.py's ``_trim``)."""
    stops = {"c0": 0} | (dict([stop]) if stop else {})
    recs = views_run(2, 30, ["p0", "p1", "p2", "c0"], stop=stops)
    run = checked(tmp_path, recs, False, ALL, LIVE)
    assert not run.whole, run.modes
    checked(tmp_path, recs, True, CORRECT, Options(scope="correct"))
