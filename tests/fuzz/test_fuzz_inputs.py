"""A seeded slice of the input fuzzer (fuzz/inputs.py): every mutated trace file gets a
verdict or a clear error naming its file, and with --keep-going every record is
accounted for. `make fuzz` runs the same for minutes."""

from __future__ import annotations

import numpy as np

from tomkit.fuzz.inputs import FAILURES, fuzz, mutate, run_one, seeds


def test_seeds_are_valid_in_every_format(tmp_path):
    got = seeds(0)
    assert {s for s, _ in got} == {".jsonl", ".jsonl.gz", ".parquet"}
    for k, (suffix, data) in enumerate(got):
        path = tmp_path / f"s{k}{suffix}"
        path.write_bytes(data)
        assert [o.kind for o in run_one(str(path), suffix)] == ["verdict", "verdict"]


def test_mutations_are_deterministic_and_change_the_input():
    (suffix, data), = [x for x in seeds(0) if x[0] == ".jsonl"][:1]
    a = mutate(np.random.default_rng(5), suffix, data)
    b = mutate(np.random.default_rng(5), suffix, data)
    assert a == b and a != data


def test_a_seeded_slice_finds_no_crash_hang_or_accounting_error(tmp_path):
    counts = fuzz(300, seed=7, out=str(tmp_path / "fails"), workers=2, timeout=60)
    assert counts["inputs"] == 300
    assert counts["verdict"] + counts["error"] == 600  # two runs per input
    assert not any(counts[k] for k in FAILURES), list((tmp_path / "fails").iterdir())
    assert counts["error"] > 0 and counts["verdict"] > 0  # the mutations bite


def test_a_crash_is_caught_and_its_input_kept(tmp_path, monkeypatch):
    from tomkit.checker import engine

    real = engine.check_paths

    def flaky(paths, *a, **kw):
        if str(paths[0]).endswith(".parquet"):
            raise KeyError("planted")
        return real(paths, *a, **kw)

    monkeypatch.setattr(engine, "check_paths", flaky)
    counts = fuzz(30, seed=1, out=str(tmp_path / "fails"), in_process=True)
    assert counts["crash"] > 0
    kept = sorted(p.name for p in (tmp_path / "fails").iterdir())
    assert any(n.endswith(".parquet") for n in kept)
    assert "KeyError: 'planted'" in next((tmp_path / "fails").glob("*.txt")).read_text()


def test_the_count_of_records_skips_what_the_reader_skips(tmp_path):
    """Seed 4005, input 59,409: a gzip member holding one NUL byte. The reader rejects
    the line (a NUL is not JSON whitespace); the fuzzer's count called it blank."""
    import gzip

    path = tmp_path / "nul.jsonl.gz"
    path.write_bytes(gzip.compress(b"\x00", mtime=0))
    outcomes = run_one(str(path), ".jsonl.gz")
    assert [o.kind for o in outcomes] == ["error", "verdict"]
