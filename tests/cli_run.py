"""The command line run in-process for the rough-edge tests (tests/cli/): its exit code,
stdout and stderr, and the one-line error a mistake must get."""

from __future__ import annotations

from tomkit.cli import main


def run(capsys, *argv) -> tuple[int | str | None, str, str]:
    """``tomkit ARGV`` in this process: exit code, stdout, stderr."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:  # argparse's own exits (usage errors, --help)
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str, prefix: str) -> str:
    """The one line of ``err``, which starts with ``prefix``: no traceback, no usage
    text."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err and "usage:" not in err
    return lines[0]
