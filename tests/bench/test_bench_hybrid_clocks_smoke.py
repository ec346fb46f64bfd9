"""docs/hybrid.md's generated clock tables (bench/hybrid_clocks.py --write-docs) against a
rerun of some of their lines, so the page cannot drift from what the model does; and the
marked-section helper they are written with (tomkit/runs/markdown.py)."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from locations import ROOT

from tomkit.runs.clocks import alone_markdown, clock_run, markdown_table, symmetric_alone
from tomkit.runs.hybrid import PROTOCOLS
from tomkit.runs.markdown import replace_section, section

DOC = ROOT / "docs" / "hybrid.md"


def _bench():
    spec = importlib.util.spec_from_file_location("hybrid_clocks", ROOT / "bench" /
                                                  "hybrid_clocks.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hybrid_clocks"] = mod
    spec.loader.exec_module(mod)
    return mod


def _rows(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("| ") and
            line[2:3].isdigit()]


def test_the_symmetric_alone_table_is_what_a_rerun_prints() -> None:
    cfg = _bench().ALONE
    body = section(DOC.read_text(), "clocks-alone")
    rerun = symmetric_alone((0.0, 0.020), seed=1, **cfg)
    fresh = _rows(alone_markdown(rerun, cfg["n"], cfg["d"], cfg["rate"], 1,
                                 cfg["duration"]))
    assert fresh[0] in _rows(body) and fresh[1] in _rows(body)
    assert alone_markdown(rerun, cfg["n"], cfg["d"], cfg["rate"], 1,
                          cfg["duration"]).splitlines()[0] == body.splitlines()[0]


def test_the_two_lan_table_is_what_a_rerun_prints() -> None:
    duration = _bench().TABLE["duration"]
    body = section(DOC.read_text(), "clocks-table")
    rows = [clock_run(p, 9, 0.020, 0.0, duration=duration, seed=1) for p in PROTOCOLS]
    line = _rows(markdown_table(rows, 1, duration))[0]
    assert line in _rows(body), (line, body)
    assert "VIOLATED" not in body
    assert len(_rows(body)) == 16  # 2 scenarios x 2 drifts x 4 skews


def test_marked_sections_are_replaced_whole_and_missing_ones_named() -> None:
    text = "a\n<!-- generated: t (by x) -->\nold\nlines\n<!-- end generated: t -->\nb\n"
    new = replace_section(text, "t", "new")
    assert new == "a\n<!-- generated: t (by x) -->\nnew\n<!-- end generated: t -->\nb\n"
    assert section(new, "t") == "new\n"
    with pytest.raises(ValueError, match="no generated section 'u'"):
        section(text, "u")
