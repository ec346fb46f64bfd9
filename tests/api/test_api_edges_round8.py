"""The Python API's arguments of the wrong type, round 8 (docs/api.md): a TypeError
naming the argument, the type wanted and the value given."""

from __future__ import annotations

import pytest

import tomkit

RECORD = {"trace": "t", "process": "p0", "kind": "send", "msg": "m"}


def test_conform_names_a_protocol_that_is_no_string(tmp_path):
    path = tmp_path / "t.jsonl"
    tomkit.write(path, [RECORD])
    with pytest.raises(TypeError, match="^protocol must be str, got int 5$"):
        tomkit.conform(str(path), 5)  # was "unknown protocol 5; known: ..."


def test_write_names_a_path_that_is_no_name(tmp_path):
    with pytest.raises(TypeError, match="^path must be a file name .*got int 5$"):
        tomkit.write(5, [RECORD])  # was Python's "expected str, bytes or os.PathLike"
