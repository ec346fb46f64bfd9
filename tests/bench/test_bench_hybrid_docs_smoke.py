"""docs/hybrid-figures.md quotes what the model does today: its generated sections
(bench/hybrid_figures.py --write-docs) against reruns of parts of them, so the page and
the demo cannot drift from the runs again (issue 29 part 6: the page once said 532 ms
for the demo's scenario 1 while the demo printed 678 ms).

* the demo's table: ``tomkit demo``'s hybrid step rerun whole (about 10 s of CPU);
* Figure 3: scenario 1 rerun at the page's configuration;
* the Figure 5 sensitivity table: its first quasi-periodic line is the demo's
  configuration, so its three means are the demo's;
* every generated section the bench writes is on the page, filled; Figure 5's full
  run (about 10 minutes of CPU) either names the configuration the bench runs or says
  it was not regenerated.
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest
from locations import ROOT

from tomkit.runs.hybrid import demo_markdown, fig3, run_demo
from tomkit.runs.markdown import section
from tomkit.runs.sensitivity import FIG5_GRID, FIG5_PROBE, FIG5_SCENARIOS

DOC = ROOT / "docs" / "hybrid-figures.md"


def _bench():
    spec = importlib.util.spec_from_file_location("hybrid_figures_docs", ROOT / "bench" /
                                                  "hybrid_figures.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hybrid_figures_docs"] = mod
    spec.loader.exec_module(mod)
    return mod


def _rows(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("| ") and
            not line.startswith("| sc ") and "---" not in line]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo-doc"), seed=1)


def test_the_demo_table_is_what_the_demo_prints_today(demo) -> None:
    assert section(DOC.read_text(), "demo") == demo_markdown(demo)


def test_the_figure_5_sensitivity_starts_from_the_demo(demo) -> None:
    assert FIG5_GRID[0] == ("quasi-periodic", 3, "ms2", 1.0, demo["dwell"])
    assert FIG5_SCENARIOS == tuple(s["scenario"] for s in demo["scenarios"])
    assert FIG5_PROBE == 0.5
    first = [r for r in _rows(section(DOC.read_text(), "sensitivity-fig5"))
             if r.startswith("| quasi-periodic | 3 | ms2 | 1 | 8 |")]
    assert len(first) == 1
    cells = [c.strip() for c in first[0].strip("|").split("|")]
    m = demo["mean_latency_ms"]
    assert cells[5:8] == [f"{m['token-site']:.0f}", f"{m['symmetric']:.0f}",
                          f"{m['hybrid']:.0f}"]


def test_figure_3_scenario_1_is_what_a_rerun_gives() -> None:
    mod = _bench()
    row = fig3((1,), seed=1, **mod.FIG3)
    fresh = _rows(mod.fig3_markdown_rows(row, 1, mod.FIG3["duration"]))[0]
    body = section(DOC.read_text(), "fig3")
    assert fresh in _rows(body)
    assert body.splitlines()[0] == f"Seed 1, {mod.FIG3['duration']:g} s per scenario, " \
                                   "latency in ms."


def test_every_generated_section_is_filled_and_figure_5_names_its_configuration() -> None:
    text = DOC.read_text()
    for name in ("fig1", "fig3", "fig3-cv2", "sensitivity-fig3", "sensitivity-fig5",
                 "demo"):
        assert _rows(section(text, name)), name
    mod = _bench()
    fig5 = section(text, "fig5-k10")
    if _rows(fig5):  # a table, then of the bench's own configuration
        assert re.match(rf"Seed 1, mean-shift k = {mod.FIG5_K}, {mod.FIG5_DWELL:g} s per "
                        "scenario", fig5.splitlines()[0]), fig5
    else:  # or it says plainly that it was not regenerated, and quotes no figure
        assert fig5.startswith("Not regenerated") and not re.search(r"\d+ ms", fig5)
    assert "12:10" not in text  # no figures measured by hand on some earlier day
