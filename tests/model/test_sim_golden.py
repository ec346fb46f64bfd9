"""The one simulator writes, byte for byte, the traces the two simulators wrote before the
common process interface (issue 12): every ToTo-family rule, crashes, per-link delays, an
ACK timeout, two mutants, and ABCAST and TOMP with each broken variant.

tests/data/sim_golden.json holds the SHA-256 of each run's JSON Lines file, computed by
the old code (its "about" says which commit). Two kinds of records are new, both for
``tomkit conform`` (the simulator now logs what the replayer needs): ABCAST and TOMP log
the receptions of their protocol messages (``x_packet``; with ``control_records=False``
the trace is the old one), and the ToTo family logs the membership's Crash(q) notices
(``x_crash``). Dropping those records gives the old trace back, byte for byte. The old
simulators ordered ToTo's ACK-only messages as candidates; the ToTo family now never
does (000 section 4.1), and these runs ask for the old reading (``ack_candidates``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from locations import DATA

from tomkit.model.net.links import Delay
from tomkit.model.sim import SimConfig, simulate
from tomkit.model.toto.rules import RULES
from tomkit.traces.writer import write_records

GOLDEN = json.loads((DATA / "sim_golden.json").read_text())["runs"]


#: the ToTo family's runs keep the old simulator's reading of ACK-only messages, as
#: candidates (option ack_candidates; model/toto/dag.py DagView._retire has today's default)
TOTO_FAMILY = frozenset(RULES)


def config(spec: dict) -> SimConfig:
    kw = dict(spec)
    if kw["protocol"] in TOTO_FAMILY:
        kw["options"] = {**kw.get("options", {}), "ack_candidates": True}

    def delay(v: dict) -> Delay:
        kind, mean, cv2, shift = v["delay"]
        return Delay(kind, mean, cv2=cv2, shift=shift)

    if "delay" in kw:
        kw["delay"] = delay(kw["delay"])
    if "link_delays" in kw:
        kw["link_delays"] = {tuple(int(x) if x.isdigit() else x for x in link): delay(d)
                             for link, d in kw["link_delays"]}
    if "crashes" in kw:
        kw["crashes"] = tuple(tuple(c) for c in kw["crashes"])
    return SimConfig(**kw)


def digest(records: list[dict], tmp_path: Path) -> str:
    """The SHA-256 of the trace file without the records the old simulators did not
    write (module docstring)."""
    path = tmp_path / "t.jsonl"
    write_records(path, [r for r in records if "x_crash" not in r and "x_packet" not in r],
                  grouped=True)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_trace_is_byte_identical_to_the_old_simulators(name: str, tmp_path: Path) -> None:
    want = GOLDEN[name]
    res = simulate(config(want["config"]))
    notices = [r for r in res.records if "x_crash" in r]
    assert len(res.records) - len(notices) == want["records"]
    assert bool(notices) == ("crashes" in want["config"])
    assert digest(res.records, tmp_path) == want["sha256"]


@pytest.mark.parametrize("name", ["abcast-poisson", "tomp-links", "tomp-raise-all"])
def test_control_records_are_only_added(name: str, tmp_path: Path) -> None:
    want = GOLDEN[name]
    spec = dict(want["config"])
    spec["options"] = {k: v for k, v in spec["options"].items() if k != "control_records"}
    res = simulate(config(spec))
    control = [r for r in res.records if r.get("x_packet")]
    assert {r["x_packet"] for r in control} == {"ack", "final"}
    assert len(res.records) - len(control) == want["records"]
    assert digest(res.records, tmp_path) == want["sha256"]
