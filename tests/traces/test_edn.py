"""The EDN reader of Jepsen histories, cross-checked against edn_format by Hypothesis."""

import edn_format
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tomkit.traces.edn import EdnError, Keyword, Symbol, loads

names = st.from_regex(r"[a-z][a-z0-9\-]{0,6}(/[a-z][a-z0-9]{0,4})?", fullmatch=True)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=8),
    names.map(edn_format.Keyword),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(edn_format.ImmutableList),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.integers(-99, 99), st.text(max_size=4),
                                  names.map(edn_format.Keyword)), inner,
                        max_size=3).map(edn_format.ImmutableDict),
        st.frozensets(st.one_of(st.integers(-99, 99), st.text(max_size=4)), max_size=3),
    ),
    max_leaves=12,
)


def canon(v):
    """One form for both readers' values."""
    if isinstance(v, edn_format.Keyword):
        return ("kw", v.name)
    if isinstance(v, Keyword):
        return ("kw", str.__str__(v))
    if isinstance(v, edn_format.Symbol):
        return ("sym", v.name)
    if isinstance(v, Symbol):
        return ("sym", str.__str__(v))
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, (dict, edn_format.ImmutableDict)):
        return ("map", sorted(((canon(k), canon(x)) for k, x in v.items()), key=repr))
    if isinstance(v, frozenset):
        return ("set", sorted((canon(x) for x in v), key=repr))
    if isinstance(v, (list, tuple, edn_format.ImmutableList)):
        return ("seq", [canon(x) for x in v])
    return v


@given(values)
@settings(max_examples=400, deadline=None)
def test_agrees_with_edn_format(value):
    text = edn_format.dumps(value)
    assert canon(loads(text)) == canon(edn_format.loads(text))


def test_a_jepsen_line():
    op = loads('#jepsen.history.Op{:index 3, :time 46, :type :ok, :process 0, :f :poll, '
               ':value [[:poll {"56" [[4 5] [5 6]]}]]}')
    assert op[Keyword("type")] == "ok" and op[Keyword("value")] == [
        [Keyword("poll"), {"56": [[4, 5], [5, 6]]}]]
    assert loads('[1N 2.5M "a\\tb\\u0041" \\c \\newline #_ 9 ; comment\n nil]') == [
        2 - 1, 2.5, "a\tbA", "c", "\n", None]


@pytest.mark.parametrize("text, problem", [
    ("{:a 1", "never closed"), ("[1 2}", "closed by"), ("{:a}", "even number"),
    ("1 2", "more after"), ("", "no value"), ('"\\q"', "unknown escape"),
    ("12abc", "not a number"), (")", "unexpected"),
])
def test_errors_say_where(text, problem):
    with pytest.raises(EdnError, match=problem) as e:
        loads(text)
    assert e.value.column >= 1
