"""Pictures of witnesses (checker/pictures.py), `tomkit check --draw` and `--html`, the
HTML page rendered in a real headless browser (Chromium)."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from tracedsl import parse

from tomkit.checker.pictures import lamport, witness_svg
from tomkit.checker.properties import Options, resolve
from tomkit.checker.trace import Trace
from tomkit.cli import main
from tomkit.traces.generate import faulty_trace
from tomkit.traces.writer import write_records

SVG = "{http://www.w3.org/2000/svg}"

WRONG_VIEW = """
    p view v1 members=p,q
    q view v1 members=p,q
    p send a
    p deliver a
    q view v2 members=p,q
    q deliver a
    p send b
    p view v2 members=p,q
    p deliver b
    q deliver b
"""


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text.split("\n", 1)[1])


def test_lamport_clock_orders_sends_before_deliveries():
    trace = Trace.from_records(parse(WRONG_VIEW))
    c = lamport(trace)
    ev = {(p, i): e for p in trace.processes for i, e in enumerate(trace.events[p])}
    for (p, i), e in ev.items():
        if i:
            assert c[(p, i)] > c[(p, i - 1)]
        if e.kind == "deliver":
            s = next(k for k, x in ev.items() if x.kind == "send" and x.msg == e.msg)
            assert c[(p, i)] > c[s]
    # a delivery before its own send (integrity's business) does not hang the layout
    odd = Trace.from_records(parse("p deliver a\np send a"))
    assert set(lamport(odd)) == {("p", 0), ("p", 1)}


def test_witness_picture_rings_the_witness_and_draws_views_as_bands():
    trace = Trace.from_records(parse(WRONG_VIEW), source="t.jsonl")
    res = resolve("sending-view-delivery").check(trace, Options())
    root = _svg(witness_svg(trace, res))
    ringed = [c for c in root.iter(SVG + "circle") if "witness" in c.get("class")]
    assert len(ringed) == len(res.witness) == 2
    labels = [t.text for t in root.iter(SVG + "text")]
    # p sends b in v1 and delivers it in v2 (the first violation found)
    assert "b is sent in view v1 but p delivers it in view v2." in labels
    assert "send b" in labels and labels.count("deliver b") == 2
    assert "send a" not in labels  # only the witness's messages
    bands = [b.get("data-label") for b in root.iter(SVG + "rect")
             if b.get("class") == "band"]
    assert sorted(bands) == ["view v1", "view v1", "view v2", "view v2"]
    arrows = [a for a in root.iter(SVG + "line") if a.get("class") == "arrow"]
    assert len(arrows) == 2  # p's send of b to both deliveries


def test_draw_writes_one_picture_per_violation(tmp_path, capsys):
    recs, truth = faulty_trace("w", "wrong-view", seed=1, views=True)
    path = tmp_path / "w.jsonl"
    write_records(path, recs)
    want = sorted({truth["property"], *truth["also_violates"]} - {"liveness"})
    code = main(["check", str(path), "-q", "-p", ",".join(want), "--draw",
                 str(tmp_path / "pics")])
    assert code == 1
    drawn = sorted(p.name for p in (tmp_path / "pics").iterdir())
    assert drawn == [f"w--{p}.svg" for p in want]
    assert "picture(s) drawn" in capsys.readouterr().err


@pytest.fixture(scope="module")
def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "Chromium is installed by `make test` (Debian package chromium)"
    return exe


def test_html_report_renders_in_a_headless_browser(tmp_path, chromium, capsys):
    recs, truth = faulty_trace("w", "wrong-view", seed=1, views=True)
    path = tmp_path / "w.jsonl"
    write_records(path, recs)
    page = tmp_path / "report.html"
    code = main(["check", str(path), "-q", "--guarantee", "isis-virtual-synchrony",
                 "--latency-bound", "10", "--html", str(page)])
    assert code == 1
    capsys.readouterr()
    # the DOM after Chromium rendered the page: the diagrams, the tables, the plot
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert 'id="verdict" class="violated"' in dom
    assert 'data-property="sending-view-delivery"' in dom
    (m,) = truth["messages"]
    assert f"send {m}" in dom and f"deliver {m}" in dom  # the witness's message
    assert 'class="event witness"' in dom
    assert "isis-virtual-synchrony (judged)" in dom
    assert 'id="latency"' in dom and "data:image/png;base64," in dom
    shot = tmp_path / "page.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    f"--screenshot={shot}", "--window-size=1200,1400", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_json_report_carries_the_profile_table(tmp_path, capsys):
    recs, _ = faulty_trace("w", "swap", seed=1)
    path = tmp_path / "s.jsonl"
    write_records(path, recs)
    assert main(["check", str(path), "-q", "--guarantee", "replicated-log", "--format",
                 "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    row = next(r for r in doc["profiles"] if r["profile"] == "replicated-log")
    assert row["verdict"] == "violated" and row["property"] in ("total-order-weak",
                                                                "prefix-order")
