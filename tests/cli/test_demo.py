"""`make demo`'s steps, each on its own (the whole demo also runs Spark and TLC)."""

from __future__ import annotations

from tomkit import demo


def test_toto_step_simulates_checks_replays_and_catches_the_swap(tmp_path, capsys):
    assert demo.toto_run(tmp_path, seed=2) is True
    out = capsys.readouterr().out
    assert "verdict: conforms" in out
    assert "total-order-weak    VIOLATED" in out
    assert "differs from the model" in out
    assert (tmp_path / "toto.parquet").exists()


def test_hybrid_step_switches_roles_and_draws_the_plot(tmp_path, capsys):
    """The hybrid settles on Figure 2's roles after each load change (scenario 4: D alone
    is high, so D orders for everybody) and is at most 5 % above the better baseline."""
    assert demo.hybrid(tmp_path, seed=1) is True
    out = capsys.readouterr().out
    assert "A>D B>D C>D D* E>D" in out
    assert (tmp_path / "hybrid" / "fig5.png").stat().st_size > 10_000


def test_qos_step_checks_the_run_against_003s_guarantees(tmp_path, capsys):
    """The run with a crash, a join and a leave satisfies the qos profile (real-time bound
    Delta + delta + 2 eps, the reservation max', member liveness) and, as 003 allows,
    not atomic broadcast's agreement."""
    assert demo.qos(tmp_path, seed=1) is True
    out = capsys.readouterr().out
    assert "qos                       satisfied <- judged" in out
    assert "atomic-broadcast          violated: agreement" in out
    assert (tmp_path / "qos" / "qos_latency_vs_n.png").exists()


def test_maelstrom_step_runs_a_correct_and_a_broken_node(tmp_path, capsys):
    assert demo.maelstrom(tmp_path, seed=1) is True
    out = capsys.readouterr().out
    assert "prefix-order         VIOLATED  (inconsistent order)" in out
    assert "verdict: valid" in out and "verdict: INVALID" in out
    assert list((tmp_path / "maelstrom" / "tob_gossip" / "pictures").glob("*.svg"))


def test_the_demos_safety_properties_come_from_the_registry():
    """Step 3 names every property a cut trace cannot fail and that needs no bound; a
    property registered later takes its place by its declaration alone."""
    from dataclasses import replace

    from tomkit.checker.properties import properties, register, unregister

    named = demo.safety_properties()
    assert {"integrity", "total-order-weak", "causal-order", "view-sequence"} <= set(named)
    assert not {"agreement", "validity", "liveness", "member-liveness", "latency",
                "realtime-latency", "rate"} & set(named)
    base = properties()["integrity"]
    for extra, kept in ((dict(), True), (dict(liveness=True), False),
                        (dict(at_end=True), False)):
        register(replace(base, name="x-demo-probe", **extra))
        try:
            assert ("x-demo-probe" in demo.safety_properties()) is kept, extra
        finally:
            unregister("x-demo-probe")
    bounded = properties()["latency"]
    register(replace(bounded, name="x-demo-bounded", options=(), reads=()))
    try:  # the same property without its bound to give is a safety one
        assert "x-demo-bounded" in demo.safety_properties()
    finally:
        unregister("x-demo-bounded")
