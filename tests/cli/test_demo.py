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
