"""``tomkit sample``'s progress bar: on a terminal a bar of traces, as ``generate`` and
``check`` show; none with ``-q`` or when stderr is not a terminal; the file is the same
whether the traces are written in one batch or several. Cheap: tens of small traces."""

from __future__ import annotations

import argparse
import io

import pytest

from tomkit.cli import sample as sample_cli
from tomkit.traces.reader import read_records


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tomkit")
    sample_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["sample", *argv])
    return args.func(args)


@pytest.mark.parametrize("quiet", [False, True])
def test_a_terminal_gets_a_bar_of_traces_unless_quiet(monkeypatch, tmp_path, quiet):
    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    out = tmp_path / "s.jsonl"
    assert _run(["--out", str(out), "--traces", "40", *(["-q"] if quiet else [])]) == 0
    if quiet:
        assert err.getvalue() == ""
    else:
        bar = err.getvalue()  # unit_scale prints 40.0/40.0
        assert "sample: 100%" in bar and "40.0/40.0" in bar and " traces/s" in bar


def test_no_bar_when_stderr_is_no_terminal(capsys, tmp_path):
    assert _run(["--out", str(tmp_path / "s.jsonl"), "--traces", "3"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_batches_write_the_same_records_as_one(monkeypatch, tmp_path, suffix):
    one, many = tmp_path / f"one.{suffix}", tmp_path / f"many.{suffix}"
    argv = ["--traces", "30", "--fault", "gap", "--seed", "5"]
    assert _run(["--out", str(one), *argv]) == 0
    monkeypatch.setattr(sample_cli, "BATCH", 7)  # a batch is about one trace
    assert _run(["--out", str(many), *argv]) == 0
    a, b = list(read_records(one)), list(read_records(many))
    assert a == b and len({r["trace"] for r in a}) == 30


def test_a_fault_it_cannot_plant_leaves_no_file(capsys, tmp_path):
    out = tmp_path / "s.parquet"
    assert _run(["--out", str(out), "--fault", "split-view", "--processes", "1"]) == 2
    assert not out.exists() and "needs at least" in capsys.readouterr().err
