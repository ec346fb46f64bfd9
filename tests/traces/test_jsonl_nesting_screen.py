"""traces/jsonl.py's nesting screen: a block goes to pyarrow's parser only if no line has
more than MAX_FAST_OPENS opening brackets (deeper lines overflow pyarrow's stack)."""

from __future__ import annotations

from tomkit.traces.jsonl import MAX_FAST_OPENS, _Block, _shallow

RECORD = b'{"trace":"t","process":"p","kind":"send","msg":"m","deps":["a"]}\n'


def block(*lines: bytes) -> _Block:
    return _Block(bytearray(b"".join(lines)), 1)


def deep(opens: int) -> bytes:
    return b'{"trace":"t","x_deep":' + b"[" * (opens - 1) + b"]" * (opens - 1) + b"}\n"


def test_many_ordinary_lines_are_shallow():
    # far more openings in the block than MAX_FAST_OPENS, two a line
    assert _shallow(block(*[RECORD] * 1000))


def test_one_line_past_the_bound_is_found_anywhere():
    for at in (0, 500, 999):
        lines = [RECORD] * 1000
        lines[at] = deep(MAX_FAST_OPENS + 1)
        assert not _shallow(block(*lines)), at


def test_the_bound_itself_is_shallow_with_blank_lines_around():
    assert _shallow(block(b"\n", *[RECORD] * 100, deep(MAX_FAST_OPENS), b"\n", b"\r\n",
                          *[RECORD] * 100))
    assert not _shallow(block(b"\n", *[RECORD] * 100, deep(MAX_FAST_OPENS + 1), b"\n"))


def test_a_small_block_takes_the_cheap_count():
    assert _shallow(block(deep(MAX_FAST_OPENS // 2)))
