"""Rough edges found trying every command as a new user would (issue 30 part 7, round
9; docs/cli.md's table): each gets one line naming what was given and what is wanted,
exit 2, before any work; a log cut mid-line is said as such; one JSON option and shape
for every command that reports a verdict."""

from __future__ import annotations

import json
import os
import threading

import pytest
from cli_run import one_line, run

from tomkit.checker.stream.follow import Follower, Position
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.reader import read_records

SEND = '{"trace": "t", "process": "p0", "kind": "send", "msg": "m"}\n'
DELIVER = '{"trace": "t", "process": "p0", "kind": "deliver", "msg": "m"}\n'
#: a third record cut after its field 'process', as kill -9 of a writer leaves it
TORN = '{"trace": "t", "process": "p1", "ki'
CUT = ("field 'process': the record ends after this field, mid-way: a line cut short "
       "(its writer stopped mid-write, as kill -9 leaves it)")


# ---- options said before the seed; empty rule names -----------------------------------

@pytest.mark.parametrize("argv, said", [
    (("--ack-timeout", "-1"), "toto: --ack-timeout must be a finite number >= 0, got -1.0"),
    (("--protocol", "hybrid", "--tick-rate", "inf"),
     "hybrid: --tick-rate must be a finite number >= 0, got inf"),
    (("--crash", "p9@1", "--n", "3"), "--crash: unknown process 'p9' (processes are p0 .. p2)"),
    (("--rule", ""), "--rule '': an empty name; give a rule, or leave the option out"),
    (("--protocol", "tomp", "--variant", ""), "--variant '': an empty name; give a variant "
     "(literal-counter, deliver-ud, ignore-head, raise-all), or leave the option out"),
])
def test_simulate_says_a_bad_option_before_its_seed(capsys, tmp_path, argv, said):
    # the seed line came first, then the option's error: the run seemed to have begun
    out = tmp_path / "run.jsonl"
    code, stdout, err = run(capsys, "simulate", *argv, "--messages", "5", "--out", out)
    assert code == 2 and stdout == "" and not out.exists()
    assert one_line(err, "tomkit simulate: ") == f"tomkit simulate: {said}"


@pytest.mark.parametrize("argv, said", [
    (("prove", ""), "tomkit prove: RULE '': an empty name; give a rule (tomkit prove toto "
     "--n 3) or --protocol (all-ack, toto"),
    (("prove", "", "--n", "3"), "tomkit prove: RULE '': an empty name"),
    (("fuzz", ""), "tomkit fuzz: RULE '': an empty name; give a rule (tomkit fuzz toto) or "
     "a protocol"),
    (("fuzz", "--rule", ""), "tomkit fuzz: --rule '': an empty name"),
    (("fuzz", "--protocol", "toto", "--rule", "", "--examples", "1"),
     "tomkit fuzz: --rule '': an empty name"),
    (("conform", "{trace}", "--protocol", "toto", "--rule", ""),
     "tomkit conform: --rule '': an empty name"),
])
def test_an_empty_rule_is_refused(capsys, tmp_path, argv, said):
    # prove read "" as no rule ("give a RULE or --protocol"); fuzz and simulate said
    # "unknown rule ''", simulate after its seed
    trace = tmp_path / "t.jsonl"
    trace.write_text(SEND)
    code, out, err = run(capsys, *[a.format(trace=trace) for a in argv])
    assert code == 2 and out == ""
    assert one_line(err, f"tomkit {argv[0]}: ").startswith(said)


# ---- one JSON option, one JSON shape --------------------------------------------------

def scanned(capsys, tmp_path, *flags: str) -> tuple[int | str | None, str, str]:
    pytest.importorskip("pyspark")
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "t.jsonl").write_text(SEND + DELIVER)
    # a small local data set: scanned in this process, no JVM (checker/spark/job.py)
    return run(capsys, "scan", data, *flags)


@pytest.mark.parametrize("flags", [("--output-format", "json"), ("--json",)])
def test_scan_json_is_the_one_shape(capsys, tmp_path, flags):
    # its JSON (--json only) had verdict sixth, after input, format and properties
    code, out, _ = scanned(capsys, tmp_path, *flags)
    doc = json.loads(out)
    assert code == 0 and list(doc)[:3] == ["tomkit", "format_version", "verdict"]
    assert doc["verdict"] == "holds" and doc["summary"]["traces"] == 1


@pytest.mark.parametrize("form", ["json", "text"])
def test_scan_format_names_the_data_and_points_to_output_format(capsys, tmp_path, form):
    # argparse listed parquet and jsonl: the user of check --format json was not told
    code, out, err = scanned(capsys, tmp_path, "--format", form)
    assert code == 2 and out == ""
    assert f"a scan's --format names its input's data format (parquet, jsonl); for the " \
        f"report as {form} give --output-format {form}" in one_line(err, "tomkit scan: ")
    code, out, _ = scanned(capsys, tmp_path, "--input-format", "jsonl", "--output-format",
                           "text")
    assert code == 0 and out.rstrip().endswith("verdict: holds")


@pytest.mark.parametrize("argv", [
    ("check", "{trace}", "-q"), ("watch", "{trace}", "--idle-exit", "0"),
    ("conform", "{sim}", "--protocol", "toto"), ("prove", "--protocol", "qos", "--n", "2"),
    ("fuzz", "toto", "--n", "3", "--examples", "1", "--messages", "2", "--out",
     "{tmp}/f")])
def test_every_verdict_command_takes_output_format(capsys, tmp_path, argv):
    trace = tmp_path / "t.jsonl"
    trace.write_text(SEND + DELIVER)
    sim = tmp_path / "sim.jsonl"
    if argv[0] == "conform":
        assert run(capsys, "simulate", "--n", "3", "--messages", "3", "--out", sim)[0] == 0
    argv = [a.format(trace=trace, sim=sim, tmp=tmp_path) for a in argv]
    code, out, _ = run(capsys, *argv, "--output-format", "json")
    assert code in (0, 1) and list(json.loads(out))[:3] == ["tomkit", "format_version",
                                                             "verdict"]


# ---- tomkit watch: what cannot be followed; a last line cut short ---------------------

def test_watch_refuses_a_named_pipe_and_a_device(capsys, tmp_path):
    """A named pipe was opened, which waits for a writer (for ever if none comes); a
    writer here lets a reader that opened it go on, so the test cannot hang."""
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:  # blocks until a reader opens it, if one ever does
            f.write(SEND)

    threading.Thread(target=feed, daemon=True).start()
    said = ("not a file: tomkit watch follows a file as it grows (reading on from where "
            "it stopped, also after a restart); have the writer append to a file and "
            "watch that, or save the stream to a file and check it with tomkit check")
    code, out, err = run(capsys, "watch", fifo, "--idle-exit", "0")
    assert code == 2 and out == ""
    assert one_line(err, "tomkit watch: ") == f"tomkit watch: {fifo}: a named pipe, {said}"
    code, _, err = run(capsys, "watch", "/dev/null", "--idle-exit", "0")
    assert code == 2
    assert one_line(err, "tomkit watch: ") == f"tomkit watch: /dev/null: a device, {said}"
    with open(fifo) as f:  # the writer, still waiting, is let go
        f.read()


def test_a_torn_last_line_is_not_yet_written_while_the_file_grows(tmp_path):
    # a live file: the line being written is left for the next read, whole once it is
    log = tmp_path / "live.jsonl"
    log.write_text(SEND + DELIVER + TORN)
    fol = Follower(Position(str(log)))
    assert sum(p.table.num_rows for p in fol.read()) == 2
    assert sum(p.table.num_rows for p in fol.read()) == 0
    with open(log, "a") as f:
        f.write('nd": "deliver", "msg": "m"}\n')
    assert sum(p.table.num_rows for p in fol.read()) == 1
    assert (fol.pos.line, fol.pos.records) == (3, 3)
    fol.close()


def test_a_torn_last_line_of_a_finished_log_is_an_error_naming_it(capsys, tmp_path):
    # the run is over (--idle-exit): watch said "holds", 2 records, exit 0, the torn line
    # dropped with no word; check said "invalid JSON at column 33: Unterminated string
    # starting at"
    log = tmp_path / "live.jsonl"
    log.write_text(SEND + DELIVER + TORN)
    code, out, err = run(capsys, "watch", log, "--idle-exit", "0")
    assert code == 2 and out == ""
    assert one_line(err, "tomkit watch: ") == f"tomkit watch: {log}:3: {CUT}, or a record " \
        "spread over several lines"
    code, _, err = run(capsys, "check", log)
    assert code == 2 and one_line(err, "tomkit check: ").startswith(
        f"tomkit check: bad input: {log}:3: {CUT}")
    with pytest.raises(TraceFormatError) as e:
        read_records(log)
    assert (e.value.location.line, e.value.field) == (3, "process")
    # keep going: the line is listed as rejected, the rest checked, exit 2 as check's
    code, out, err = run(capsys, "watch", log, "--idle-exit", "0", "--keep-going")
    assert code == 2 and "2 records accepted, 1 rejected" in out
    assert f"  {log}:3: {CUT}" in out


def test_a_whole_last_line_without_newline_is_read_at_the_end(capsys, tmp_path):
    # tomkit check reads it; watch dropped it at the end (2 events, not 3)
    log = tmp_path / "run.jsonl"
    log.write_text(SEND + DELIVER + DELIVER.replace("p0", "p1").rstrip("\n"))
    code, out, _ = run(capsys, "watch", log, "--idle-exit", "0")
    assert code == 0 and "3 records accepted, 0 rejected" in out


# ---- more of the same kind ------------------------------------------------------------

def test_a_huge_n_is_judged_before_the_process_names_are_made(capsys, tmp_path):
    # a set of 10^20 process names was made first: the command ran until killed
    code, out, err = run(capsys, "simulate", "--n", "99999999999999999999", "--out",
                         tmp_path / "run.jsonl")
    assert code == 2 and out == ""
    assert one_line(err, "tomkit simulate: ").startswith(
        "tomkit simulate: --n 99999999999999999999 --messages 4000: the simulator keeps "
        "its whole trace in memory")


@pytest.mark.parametrize("value", ["0", "-3"])
def test_scan_refuses_no_shuffle_partitions(capsys, tmp_path, value):
    # taken: ignored by a scan in this process, a JVM's error after Spark's start
    code, out, err = scanned(capsys, tmp_path, "--shuffle-partitions", value)
    assert code == 2 and out == ""
    assert one_line(err, "tomkit scan: ") == \
        f"tomkit scan: --shuffle-partitions must be at least 1, got {value}"


@pytest.mark.parametrize("argv, said", [
    (("conform", "{trace}", "--protocol", "toto", "--n", "3"), "no option --n (then 3)"),
    (("check", "{trace}", "--live"), "no option --live; did you mean '--liveness'?"),
])
def test_an_abbreviated_flag_is_not_taken_for_another(capsys, tmp_path, argv, said):
    # argparse took --n for --no-control-records, the one flag starting so, and conform
    # answered "--control-records does not apply to toto"
    trace = tmp_path / "t.jsonl"
    trace.write_text(SEND)
    code, out, err = run(capsys, *[a.format(trace=trace) for a in argv])
    assert code == 2 and out == ""
    assert one_line(err, f"tomkit {argv[0]}: ") == \
        f"tomkit {argv[0]}: {said} (tomkit {argv[0]} --help gives the usage)"


@pytest.mark.parametrize("argv, said", [
    (("import", "--mapping", "{bad}", "{trace}", "--out", "{tmp}/o.jsonl"),
     "tomkit import: bad mapping: {bad}: not UTF-8 text (byte 0xff at offset 0); a TOML "
     "file is UTF-8"),
    (("check", "{trace}", "--guarantee-file", "{bad}"),
     "tomkit check: {bad}: not UTF-8 text (byte 0xff at offset 0); a TOML file is UTF-8"),
    (("check", "{trace}", "--guarantee-file", "/dev/null"),
     "tomkit check: /dev/null: a pipe or a device, not a file; give a TOML file"),
    (("watch", "{trace}", "--mapping", "{tmp}", "--idle-exit", "0"),
     "tomkit watch: bad mapping: {tmp}: a folder; give a TOML file"),
])
def test_a_toml_file_that_is_not_one_is_said(capsys, tmp_path, argv, said):
    # non-UTF-8: a UnicodeDecodeError traceback; /dev/zero filled the memory (a device
    # is refused before it is read; /dev/null stands for it here)
    trace = tmp_path / "t.jsonl"
    trace.write_text(SEND)
    bad = tmp_path / "m.toml"
    bad.write_bytes(b"\xff\xfe[file]\n")
    fill = {"trace": trace, "bad": bad, "tmp": tmp_path}
    code, out, err = run(capsys, *[a.format(**fill) for a in argv])
    assert code == 2 and out == ""
    assert one_line(err, f"tomkit {argv[0]}: ") == said.format(**fill)


def test_the_api_says_an_empty_name(tmp_path):
    import tomkit

    rec = {"trace": "t", "process": "p0", "kind": "send", "msg": "m"}
    with pytest.raises(ValueError, match=r"^path is an empty name; give a file name"):
        tomkit.write("", [rec])  # ": cannot tell the format from the name"
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(ValueError, match=r"d\.jsonl: a folder; give a file name$"):
        tomkit.write(tmp_path / "d.jsonl", [rec])  # IsADirectoryError
    with pytest.raises(ValueError, match=r"^the rule is an empty name; give one of "):
        tomkit.prove("", 3)  # "unknown rule ''"


def test_watch_refuses_a_gzip_log(capsys, tmp_path):
    # read as JSON Lines: "invalid UTF-8 at column 2"
    import gzip

    log = tmp_path / "run.jsonl.gz"
    log.write_bytes(gzip.compress(SEND.encode()))
    code, out, err = run(capsys, "watch", log, "--idle-exit", "0")
    assert code == 2 and out == ""
    assert one_line(err, "tomkit watch: ") == (
        f"tomkit watch: {log}: a gzip file is compressed in blocks, not followed line by "
        f"line as it grows; tomkit check {log} reads it whole (a recorder's live file is "
        "plain JSON Lines)")


def test_watch_reads_a_file_named_twice_once(capsys, tmp_path, monkeypatch):
    # every record was read twice: each delivery a duplicate, "integrity violated"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.jsonl").write_text(SEND + DELIVER)
    code, out, _ = run(capsys, "watch", "run.jsonl", "./run.jsonl", tmp_path / "run.jsonl",
                       "--idle-exit", "0")
    assert code == 0 and "1 file(s), 1 trace(s), 2 events checked" in out
    assert out.rstrip().endswith("verdict: holds")


def test_tomkit_alone_names_the_subcommands(capsys):
    # argparse said "the following arguments are required: command"
    code, out, err = run(capsys)
    assert code == 2 and out == ""
    assert one_line(err, "tomkit: ") == (
        "tomkit: give a subcommand: check, watch, import, conform, simulate, fuzz, prove, "
        "tlc, generate, scan, sample, run (tomkit --help gives the usage)")


@pytest.mark.parametrize("argv, said", [
    (("generate", "--traces", "2", "--protocol", "", "-q", "--out", "{tmp}/g"),
     "tomkit generate: --protocol '': names no protocol; give one of all-ack, toto, "
     "s-toto, g-toto, gl-toto, synthetic, or leave the option out"),
    (("tlc", "", "--out", "{tmp}/t"),
     "tomkit tlc: SPEC '': an empty name; give a .tla file, or a spec tomkit ships "
     "(tomkit tlc ABCAST)"),
])
def test_more_empty_names_are_refused(capsys, tmp_path, argv, said):
    # generate made a data set of every protocol, as if no --protocol was given; tlc
    # said ": neither a .tla file nor a spec tomkit ships"
    code, out, err = run(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and out == "" and list(tmp_path.iterdir()) == []
    assert one_line(err, f"tomkit {argv[0]}: ") == said


@pytest.mark.parametrize("argv", [
    ("check", "{trace}", "--html", "{trace}"), ("check", "{tmp}", "--html", "{trace}"),
    ("watch", "{trace}", "--out", "{trace}", "--idle-exit", "0")])
def test_an_output_that_is_an_input_is_refused(capsys, tmp_path, argv):
    # check replaced the trace by its HTML report, with no word; watch appended its
    # verdict lines to the log it follows
    trace = tmp_path / "t.jsonl"
    trace.write_text(SEND)
    argv = [a.format(trace=trace, tmp=tmp_path) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and trace.read_text() == SEND
    verb = "overwrite" if argv[0] == "check" else "write into"
    assert one_line(err, f"tomkit {argv[0]}: ") == (
        f"tomkit {argv[0]}: {argv[2]} {trace}: the input {argv[1]}, which it would {verb}; "
        "give another file")


def test_a_trace_id_that_is_not_utf8_is_refused_before_simulating(capsys, tmp_path):
    # the shell's $'a\xff' reaches Python as a surrogate escape: the writer failed with
    # a UnicodeEncodeError traceback after the simulation
    out = tmp_path / "run.jsonl"
    code, stdout, err = run(capsys, "simulate", "--n", "3", "--messages", "3",
                            "--trace-id", "a\udcff", "--out", out)
    assert code == 2 and stdout == "" and not out.exists()
    assert one_line(err, "tomkit simulate: ") == (
        "tomkit simulate: --trace-id a\\xff: not UTF-8 text; a trace id is written in the "
        "trace, which is UTF-8")


def test_import_refuses_a_named_pipe_and_a_device(capsys, tmp_path):
    # a named pipe waited for a writer, for ever if none came; /dev/zero ran until killed
    # (a device: /dev/null stands for it here). A writer lets a reader that opened the
    # pipe go on, so the test cannot hang
    fifo = tmp_path / "h.edn"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:
            f.write("")

    threading.Thread(target=feed, daemon=True).start()
    for log, what in ((fifo, "a named pipe"), ("/dev/null", "a device")):
        code, out, err = run(capsys, "import", "--format", "jepsen", log, "--out",
                             tmp_path / "o.jsonl")
        assert code == 2 and out == ""
        assert one_line(err, "tomkit import: ") == (
            f"tomkit import: {log}: {what}, not a file; save the stream to a file and "
            "import that")
    with open(fifo) as f:  # the writer, still waiting, is let go
        f.read()


@pytest.mark.parametrize("argv", [
    ("simulate", "--n", "3", "--messages", "3"), ("sample", "--traces", "2"),
    ("import", "--format", "jepsen", "{trace}"), ("watch", "{trace}", "--idle-exit", "0")])
def test_an_output_that_is_a_named_pipe_is_refused(capsys, tmp_path, argv):
    # simulate waited for a reader, and a stop then removed the user's pipe; sample
    # replaced the pipe by a file. A reader lets a writer that opened the pipe go on,
    # so the test cannot hang
    fifo = tmp_path / "o.jsonl"
    os.mkfifo(fifo)
    trace = tmp_path / "t.jsonl"
    trace.write_text(SEND)

    def drain():
        with open(fifo) as f:
            f.read()

    threading.Thread(target=drain, daemon=True).start()
    code, out, err = run(capsys, *[a.format(trace=trace) for a in argv], "--out", fifo)
    assert code == 2 and out == "" and fifo.is_fifo()
    assert one_line(err, f"tomkit {argv[0]}: ") == \
        f"tomkit {argv[0]}: --out {fifo}: a named pipe, not a file; give a file name"
    try:  # the reader, still waiting, is let go (ENXIO: it has not opened it yet)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
