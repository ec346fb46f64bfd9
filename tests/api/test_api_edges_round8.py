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


@pytest.mark.parametrize("key, value, error, said", [
    ("scope", 5, TypeError, "scope must be str, got int 5"),
    ("guarantee", 5, TypeError, "guarantee must be str, got int 5"),
    ("draw", 5, TypeError, r"draw must be a file or folder name \(str or os.PathLike\), "
                           "got int 5"),
    ("html", 5, TypeError, "html must be a file or folder name"),
    ("html", "", ValueError, "html is an empty name; give a file, or None"),
    ("draw", "", ValueError, "draw is an empty name; give a folder, or None"),
])
def test_check_names_its_settings_of_the_wrong_type(tmp_path, key, value, error, said):
    # scope=5 failed inside difflib ("'int' object is not iterable"), draw=5 with
    # Python's "expected str, bytes or os.PathLike object"; html="" drew nothing, silently
    path = tmp_path / "t.jsonl"
    tomkit.write(path, [RECORD])
    with pytest.raises(error, match=f"^{said}"):
        tomkit.check(path, **{key: value})
