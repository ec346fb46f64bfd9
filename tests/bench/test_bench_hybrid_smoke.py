"""Smoke form of bench/hybrid_figures.py: the shapes of 001's Figures 1, 3 and 5
(Rodrigues, Fonseca, Verissimo sections 4.2, 4.4, 6.2) on short runs.

Tolerances (ours; the figures are lost, the text gives lines and orderings):
* Figure 1: token-site latency / 2D in [0.9, 1.15]; symmetric / (D + t) in [0.8, 1.15]
  (with n processes at random phases the wait for the last one is about t (n-1)/n, so
  below the line at small n); the curves cross between D = 50 and 200 ms, near D = t.
* Figure 3: the roles of Figure 2 (H active, L passive) are the ones the trace shows;
  hybrid <= 1.05 * min(token-site, symmetric) + 20 ms in every scenario; token-site
  within 10 % of its 2D line; symmetric within 10 % of D + t in scenario 9; token-site
  degrades (x 1.8) when the load moves from A's LAN to D's.
* Figure 5 (short: scenarios 2, 1, 4 for 6 s each, probes every 0.5 s, mean-shift k = 3):
  after each change the hybrid settles on Figure 2's roles, and in the settled half of
  each scenario it is <= 1.05 * the better baseline + 20 ms; the transient after a change
  is visible (a window of the first half 1.5 x above the settled level); the PNG is
  written.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
from locations import ROOT

from tomkit.runs.hybrid import fig1, fig1_crossover, fig3, run_demo

BENCH = ROOT / "bench" / "hybrid_figures.py"


def _bench():
    spec = importlib.util.spec_from_file_location("hybrid_figures", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hybrid_figures"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_fig1_token_site_on_2d_symmetric_on_d_plus_t_crossing_near_t() -> None:
    rows = fig1((0.05, 0.2), n=8, rate=10.0, duration=2.5, warmup=0.5, seed=2)
    for r in rows:
        assert 0.9 <= r.token / r.two_d <= 1.15, (r.d, r.token)
        assert 0.8 <= r.symmetric / r.d_plus_t <= 1.15, (r.d, r.symmetric)
    assert rows[0].token < rows[0].symmetric and rows[1].token > rows[1].symmetric
    assert 0.07 <= fig1_crossover(rows) <= 0.14


@pytest.fixture(scope="module")
def fig3_rows():
    # each low process sends exactly one message in [0.5 s, 1.5 s): its first at a
    # random phase in [0, 1 s), the next 1 s later
    return fig3((1, 4, 9), duration=1.5, warmup=0.5, seed=3)


def test_fig3_hybrid_roles_are_figure_2s(fig3_rows) -> None:
    got = {r.scenario: r.observed_roles for r in fig3_rows}
    assert got == {1: "A* B>A C>A D>A E>A", 4: "A>D B>D C>D D* E>D", 9: "A* B* C* D* E*"}
    assert all(r.observed_roles == r.expected_roles for r in fig3_rows)


def test_fig3_hybrid_no_worse_than_the_better_baseline(fig3_rows) -> None:
    for r in fig3_rows:
        assert r.latency["hybrid"] <= 1.05 * r.best_baseline + 0.020, r
        assert r.latency["token-site"] == pytest.approx(r.paper["token-site"], rel=0.10)
    by = {r.scenario: r for r in fig3_rows}
    assert by[9].latency["symmetric"] == pytest.approx(by[9].paper["symmetric"], rel=0.10)
    assert by[9].latency["symmetric"] < by[9].latency["token-site"]  # symmetric best in 9
    assert by[1].latency["token-site"] < by[1].latency["symmetric"]  # token best near A
    assert by[4].latency["token-site"] > 1.8 * by[1].latency["token-site"]
    # the hybrid's line is almost flat: within 10 % over the scenarios
    hy = [r.latency["hybrid"] for r in fig3_rows]
    assert max(hy) <= 1.1 * min(hy)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    # scenario 2 (A, B high), then 1 (B drops to low), then 4 (A low, D high), 6 s each
    return run_demo(tmp_path_factory.mktemp("demo"), seed=4, dwell=6.0, scenarios=(2, 1, 4))


def test_fig5_hybrid_switches_and_settles_below_both(demo) -> None:
    assert Path(demo["png"]).stat().st_size > 10_000
    # the first scenario is the start-up: every process active until it has estimates
    # (001 section 5.1); after each change, Figure 2's roles
    roles = [s["hybrid_roles"] for s in demo["scenarios"][1:]]
    assert roles == ["A* B>A C>A D>A E>A", "A>D B>D C>D D* E>D"]
    for s in demo["scenarios"][1:]:
        lat = s["latency_ms"]
        assert lat["hybrid"] <= 1.05 * min(lat["token-site"], lat["symmetric"]) + 20, s
    m = demo["mean_latency_ms"]
    assert m["hybrid"] < m["symmetric"]


def test_fig5_transient_after_a_change_is_visible(demo) -> None:
    # when B drops to low (t = 6 s) it is still active: until it has detected that and
    # gone passive, everyone waits for its (now rare) messages, a bump above the settled
    # level; the same when A drops at t = 12 s
    hy = [(t, m) for t, m in demo["hybrid_series_ms"] if not math.isnan(m)]
    for k in (1, 2):
        settled = demo["scenarios"][k]["latency_ms"]["hybrid"]
        peak = max(m for t, m in hy if 6.0 * k <= t < 6.0 * k + 3.0)
        assert peak > 1.5 * settled, (k, peak, settled)


def test_bench_quick_prints_figures_beside_the_paper(capsys, tmp_path: Path) -> None:
    mod = _bench()
    assert mod.main(["--figure", "1", "--quick", "--n", "6", "--duration", "2", "--seed", "2",
                     "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "seed 2" in out and "crossover: measured D =" in out and "paper D = t = 100 ms" in out
    assert (tmp_path / "fig1.png").stat().st_size > 10_000


def test_paper_lines_of_figure_3() -> None:
    from tomkit.runs.hybrid import fig3_paper_lines

    # 2D per sender: A 520 (its own delay to the far LAN), B and C 20 + 520, D and E
    # 520 + 520; D + t: 520 + the largest gap
    all_high = fig3_paper_lines("HHHHH")
    assert all_high["token-site"] == pytest.approx((520 + 2 * 540 + 2 * 1040) / 5 / 1e3)
    assert all_high["symmetric"] == pytest.approx(0.530)
    only_d = fig3_paper_lines("LLLHL")
    assert only_d["token-site"] == pytest.approx((520 + 2 * 540 + 100 * 1040 + 1040) / 104
                                                 / 1e3)
    assert only_d["symmetric"] == pytest.approx(1.520)


def test_roles_from_trace_reads_the_ticket_issuers() -> None:
    from tomkit.runs.hybrid import roles_from_trace

    recs = [{"kind": "send", "process": "p0", "msg": "p0.1", "time": 0.0},
            {"kind": "send", "process": "p1", "msg": "p1.1", "time": 0.1},
            {"kind": "send", "process": "p1", "msg": "p1.2", "time": 2.0},
            {"kind": "deliver", "process": "p0", "msg": "p0.1", "x_ticket": ["p0", 1]},
            {"kind": "deliver", "process": "p1", "msg": "p0.1", "x_ticket": ["p0", 1]},
            {"kind": "deliver", "process": "p0", "msg": "p1.1", "x_ticket": ["p0", 2]},
            {"kind": "deliver", "process": "p0", "msg": "p1.2", "x_ticket": ["p1", 9]}]
    assert roles_from_trace(recs) == {"p0": "p0", "p1": "p0"}
    assert roles_from_trace(recs, since=1.0) == {"p1": "p1"}
