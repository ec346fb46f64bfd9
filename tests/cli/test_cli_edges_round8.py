"""Rough edges found trying every command as a new user would (issue 30 part 7, round
8; docs/cli.md's table): each gets one line naming what was given and what is wanted,
exit 2, before any work."""

from __future__ import annotations

import math

import pytest
from cli_run import one_line, run

import tomkit
from tomkit.cli.fuzz import LARGEST_EXAMPLES


def test_fuzz_refuses_examples_that_cannot_finish(capsys, tmp_path):
    code, out, err = run(capsys, "fuzz", "toto", "--examples", "99999999999999999999",
                         "--out", tmp_path / "f")
    line = one_line(err, "tomkit fuzz: --examples 99,999,999,999,999,999,999: an example "
                    "took 25 to 45 ms of CPU")
    assert code == 2 and out == "" and "at least 7.9e+10 years" in line
    assert f"up to {LARGEST_EXAMPLES:,} are taken" in line and "--no-size-limit" in line
    code, _, err = run(capsys, "fuzz", "--protocol", "abcast", "--examples",
                       str(LARGEST_EXAMPLES + 1), "--out", tmp_path / "f")
    assert code == 2 and "at least 42 minutes" in one_line(err, "tomkit fuzz: --examples "
                                                           "100,001:")
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize("argv, said", [
    (("toto", "--seed", "-1"), "--seed must be at least 0, got -1"),
    (("--protocol", "hybrid", "--spares", "-1"), "--spares must be at least 0, got -1"),
    (("--protocol", "abcast", "--comebacks", "-3"), "--comebacks must be at least 0, got -3"),
    (("toto", "--spares", "1"), "the rule form takes --delta only"),
])
def test_fuzz_refuses_negative_and_misplaced_numbers(capsys, tmp_path, argv, said):
    # before: a seed of -1 was taken (every other command refuses it), --spares -1 ran,
    # --comebacks -3 said "abcast cannot honour recover", the rule form ignored --spares
    code, out, err = run(capsys, "fuzz", *argv, "--examples", "1", "--out", tmp_path)
    assert code == 2 and out == "" and said in one_line(err, "tomkit fuzz: ")


@pytest.mark.parametrize("flag, what", [("--html", "file"), ("--draw", "folder"),
                                        ("--plot-latency", "file"),
                                        ("--guarantee-file", "file")])
def test_check_refuses_an_empty_output_name(capsys, tmp_path, flag, what):
    # an unset shell variable: nothing was drawn or written, and nothing said
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n')
    code, out, err = run(capsys, "check", trace, flag, "")
    assert code == 2 and out == ""
    assert one_line(err, "tomkit check: ") == \
        f"tomkit check: {flag} '': an empty name; give a {what}"


@pytest.mark.parametrize("flag", ["--latency-bound", "--realtime-bound"])
def test_an_infinite_bound_is_refused(capsys, tmp_path, flag):
    # a bound of inf judged nothing (every latency holds) and said nothing of it
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n')
    code, _, err = run(capsys, "check", trace, flag, "inf")
    assert code == 2
    assert one_line(err, "tomkit check: ") == (
        f"tomkit check: {flag} must be a finite number, got inf (leave the option out: "
        "no bound)")
    with pytest.raises(ValueError, match="must be a finite number, got inf"):
        tomkit.check(trace, latency_bound=math.inf)


def test_generate_with_an_empty_out_keeps_the_current_folder(capsys, tmp_path, monkeypatch):
    # an unset shell variable: the current folder was replaced by the data set, and
    # deleted with everything in it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.txt").write_text("the user's own file\n")
    code, _, err = run(capsys, "generate", "--traces", "2", "-q", "--out", "")
    assert code == 2 and (tmp_path / "mine.txt").read_text() == "the user's own file\n"
    assert one_line(err, "tomkit generate: ").startswith(
        "tomkit generate: --out '': an empty name; give a new folder")
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    from tomkit.model.dataset import generate

    with pytest.raises(ValueError, match="an empty name"):
        generate("", ["toto"], 2)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


@pytest.mark.parametrize("argv, said", [
    (("fuzz", "majority", "--n", "4", "--out", ""), "--out '': an empty name; give a folder"),
    (("prove", "toto", "--n", "3", "--out", ""), "--out '': an empty name; give a folder"),
    (("tlc", "abcast", "--out", ""), "--out '': an empty name; give a folder"),
    (("scan", "{data}", "--out", ""), "--out '': an empty name; give a folder"),
    (("import", "--format", "jepsen", "x.edn", "--out", ""),
     "--out '': an empty name; give a file"),
    (("import", "--format", "jepsen", "", "--out", "z.jsonl"),
     "LOG '': an empty name; give a log file"),
    (("import", "--mapping", "", "x.log", "--out", "z.jsonl"),
     "--mapping '': an empty name; give a file"),
    (("watch", "{trace}", "--out", ""), "--out '': an empty name; give a file"),
    (("watch", "{trace}", "--state", ""), "--state '': an empty name; give a folder"),
    (("watch", "{trace}", "--stop-file", ""), "--stop-file '': an empty name; give a file"),
    (("watch", ""), "FILE '': an empty name; give a log file"),
    (("run", "-w", "echo", "--bin", ""), "--bin '': an empty name; give a program"),
    (("run", "-w", "echo", "--bin", "/bin/cat", "--out", ""),
     "--out '': an empty name; give a folder"),
])
def test_an_empty_name_is_refused_before_any_work(capsys, tmp_path, monkeypatch, argv,
                                                  said):
    # before: fuzz lost its finding to a FileNotFoundError traceback, tlc wrote its log
    # into the current folder, scan said the folder held its input, watch --out failed
    # with a traceback, --state kept no state, --stop-file never stopped, run wrote
    # into store/
    monkeypatch.chdir(tmp_path)
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n')
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.jsonl").write_text(trace.read_text())
    argv = [a.format(data=tmp_path / "data", trace=trace) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert one_line(err, f"tomkit {argv[0]}: ") == f"tomkit {argv[0]}: {said}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "t.jsonl"]


def test_a_pipe_or_a_device_is_said_to_be_no_file(capsys, tmp_path):
    """A pipe (the shell's <(zcat run.jsonl.gz)) was read as an empty file; /dev/zero
    filled the memory until the OOM killer came (not run here: /dev/null is a device
    too). A writer feeds the pipe, so that a reader that opened it would not block."""
    import os
    import threading

    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:  # blocks until a reader opens it, if one ever does
            f.write('{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n')

    threading.Thread(target=feed, daemon=True).start()
    said = ("not a file: a trace file is read more than once (its first bytes tell the "
            "format); save the stream to a file first, or follow a growing file with "
            "tomkit watch")
    code, _, err = run(capsys, "check", fifo)
    assert code == 2
    assert one_line(err, "tomkit check: ") == f"tomkit check: bad input: {fifo}: a pipe, {said}"
    code, _, err = run(capsys, "conform", "/dev/null", "--protocol", "toto")
    assert code == 2
    assert one_line(err, "tomkit conform: ") == \
        f"tomkit conform: bad input: /dev/null: a device, {said}"
    with open(fifo) as f:  # the writer, still waiting, is let go
        f.read()


@pytest.mark.parametrize("argv, flag, value", [
    (("simulate", "--ack-timeout", "-1"), "--ack-timeout", "-1.0"),
    (("simulate", "--ack-timeout", "inf"), "--ack-timeout", "inf"),
    (("simulate", "--protocol", "hybrid", "--tick-rate", "inf"), "--tick-rate", "inf"),
    (("simulate", "--protocol", "hybrid", "--heartbeat", "nan"), "--heartbeat", "nan"),
    (("fuzz", "--protocol", "toto", "--ack-timeout", "-1"), "--ack-timeout", "-1.0"),
])
def test_a_protocol_number_must_be_finite_and_not_negative(capsys, tmp_path, argv, flag,
                                                            value):
    # a negative --ack-timeout ran for ever, an infinite one wrote NaN times (then
    # "cannot write"), --tick-rate inf failed with an OverflowError traceback
    protocol = argv[argv.index("--protocol") + 1] if "--protocol" in argv else "toto"
    code, _, err = run(capsys, *argv, "--n", "3", "--messages", "2", "--out",
                       tmp_path / ("f" if argv[0] == "fuzz" else "s.jsonl"))
    assert code == 2
    assert one_line(err, f"tomkit {argv[0]}: ") == (
        f"tomkit {argv[0]}: {protocol}: {flag} must be a finite number >= 0, got {value}")
    with pytest.raises(ValueError, match=f"{flag} must be a finite number >= 0"):
        tomkit.simulate(protocol, n=3, messages=2, **{flag[2:].replace("-", "_"):
                                                       float(value)})


def test_a_scope_named_with_the_property_is_kept(tmp_path):
    # --scope correct -p total-order-weak@uniform judged it @correct, silently
    trace = tmp_path / "t.jsonl"
    tomkit.write(trace, [{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}])
    both = tomkit.check(trace, properties=["total-order-weak@uniform", "total-order-strong"],
                        scope="correct")
    assert both.properties == ["total-order-weak", "total-order-strong@correct"]


@pytest.mark.parametrize("gz", [False, True])
def test_a_line_without_end_is_refused_not_held(capsys, tmp_path, monkeypatch, gz):
    """A line of hundreds of MB with no newline (binary data named .jsonl) was held whole
    in memory, to the OOM killer; the bound is made small here, so that a few MB show
    it."""
    import gzip

    from tomkit.traces import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1 << 16)
    path = tmp_path / ("big.jsonl.gz" if gz else "big.jsonl")
    # more than the bound and two read blocks (4 MB each) after the first line
    data = b'{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n' + b"x" * (12 << 20)
    path.write_bytes(gzip.compress(data, 1) if gz else data)
    code, _, err = run(capsys, "check", path)
    assert code == 2
    assert one_line(err, "tomkit check: ") == (
        f"tomkit check: bad input: {path}: a line longer than 0 MB, with no end: no trace "
        "record (binary data, or one JSON document?)")
