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
