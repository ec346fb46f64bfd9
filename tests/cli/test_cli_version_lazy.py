"""``tomkit --version`` reads the installed version only when asked: the command line
starts without importlib.metadata (issue 30 part 6: start-up of a short command)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tomkit
from tomkit.cli import main


def test_version_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr()
    assert out.out == f"tomkit {tomkit.__version__}\n" and out.err == ""
    assert tomkit.__version__.count(".") >= 1


def test_the_command_line_starts_without_importlib_metadata() -> None:
    code = ("import sys, tomkit.cli, tomkit.cli.simulate; "
            "print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    assert out.strip() == "False"


def test_an_unknown_attribute_is_refused() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        tomkit.nothing  # noqa: B018
