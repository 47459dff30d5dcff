"""Property tests of the Chain-of-Abstraction parser: any text is a chain (problems on its
calls) or, checked, the documented ChainParseError; generated chains read back as written;
placeholder replacement never touches a longer placeholder."""

import keyword
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.agent.coa import ChainParseError, Ref, format_call, parse_chain, replace_placeholders

_WHERE = re.compile(r"FUNC #(\d+) at line (\d+), column (\d+) \(`")

FRAGMENTS = ["[FUNC ", "[FUNC", "add", "f", "(", ")", "[", "]", "{", "}", ",", "=", " = ",
             "y1", "y2", "y10", '"y1"', "'", '"', "\\", ":", "1", "-2.5", "true", "null",
             " ", "\n", "\r", "x=", "*", "#", "\x00", "é", '"""', "y1]", ") = y2]"]


def assert_well_formed(text: str) -> None:
    chain = parse_chain(text)
    assert [c.index for c in chain.calls] == list(range(1, len(chain.calls) + 1))
    for call in chain.calls:
        assert text[call.start:call.end] == call.source
        if call.error is not None:
            match = _WHERE.match(call.error)
            assert match is not None and int(match.group(1)) == call.index, call.error
        for start, end, name in call.ref_spans:
            assert text[start:end] in (name, f'"{name}"', f"'{name}'")
    placed = sorted(i for level in chain.levels for i in level)
    assert placed == [c.index for c in chain.calls]
    try:
        chain.check()
    except ChainParseError as exc:
        assert exc.problems == chain.problems and chain.problems
    else:
        assert not chain.problems


@pytest.mark.slow  # a property test at full size
@given(st.text(st.characters(exclude_categories=())))
def test_any_text_is_a_chain_or_the_documented_error(text):
    assert_well_formed(text)


@pytest.mark.slow  # property test at full size
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_any_mix_of_chain_syntax_is_a_chain_or_the_documented_error(text):
    assert_well_formed(text)


@pytest.mark.slow  # property test at full size
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join), st.text(max_size=30))
def test_any_argument_list_is_read_or_named_as_a_problem(arguments, prose):
    assert_well_formed(f"{prose}[FUNC f({arguments}) = y1]{prose}")


# ---------------------------------------------------------------- round trips
# a string that is a whole placeholder name ("y1") is a reference by the format's rules (a quoted
# placeholder resolves), so literals never are one
literals = st.recursive(
    st.none() | st.booleans() | st.integers()
    | st.text(max_size=8).filter(lambda t: re.fullmatch(r"y[0-9]+", t) is None)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=8)
names = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n))
prose = st.text(max_size=10).map(lambda t: f" {t} ").filter(lambda t: "[FUNC" not in t)


def _with_refs(draw, value, defined):
    """Swap some literals for references to placeholders defined so far."""
    if defined and draw(st.booleans()):
        return Ref(draw(st.sampled_from(defined)))
    if isinstance(value, list):
        return [_with_refs(draw, v, defined) for v in value]
    return value


@st.composite
def chains(draw):
    count = draw(st.integers(1, 14))
    calls, defined = [], []
    for number in range(1, count + 1):
        args = [_with_refs(draw, v, defined) for v in draw(st.lists(literals, max_size=3))]
        kwargs = draw(st.dictionaries(names, literals, max_size=2))
        calls.append((draw(names), args, kwargs, f"y{number}"))
        defined.append(f"y{number}")
    glue = [draw(prose) for _ in range(count + 1)]
    text = glue[0] + "".join(format_call(n, a, o, k) + g
                             for (n, a, k, o), g in zip(calls, glue[1:], strict=True))
    return text, calls


def _refs(value):
    if isinstance(value, Ref):
        yield value.name
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _refs(item)


def _same(read, written):
    """Equal as values (ints read back may equal floats written, 1 == 1.0)."""
    return type(read) is type(written) and read == written if not isinstance(written, (
        list, dict)) else (len(read) == len(written) and (
            all(_same(r, w) for r, w in zip(read, written, strict=True)) if isinstance(written, list)
            else all(_same(read[k], w) for k, w in written.items())))


@pytest.mark.slow  # property test at full size
@given(chains())
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
def test_a_written_chain_reads_back_as_written(generated):
    text, written = generated

    chain = parse_chain(text).check()

    assert len(chain.calls) == len(written)
    for call, (name, args, kwargs, output) in zip(chain.calls, written, strict=True):
        assert (call.name, call.output) == (name, output)
        assert _same(list(call.args), args) and _same(dict(call.kwargs), kwargs)


@pytest.mark.slow  # property test at full size
@given(chains())
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
def test_every_call_runs_after_the_calls_it_reads_from(generated):
    text, _written = generated

    chain = parse_chain(text).check()

    level_of = {i: n for n, level in enumerate(chain.levels) for i in level}
    for call in chain.calls:
        needed = {int(name[1:]) for value in [*call.args, *call.kwargs.values()]
                  for name in _refs(value)}
        assert all(level_of[i] < level_of[call.index] for i in needed)
        assert level_of[call.index] == (1 + max((level_of[i] for i in needed), default=-1))


# ---------------------------------------------------------------- replacement
separators = st.sampled_from([" ", ", ", "\n", ".", "(", ")", '"', "'", "-", "+", "[", "]"])


@st.composite
def placeholder_texts(draw):
    tokens = draw(st.lists(st.integers(1, 130).map(lambda n: f"y{n}"), min_size=1, max_size=20))
    seps = draw(st.lists(separators, min_size=len(tokens) + 1, max_size=len(tokens) + 1))
    text = seps[0] + "".join(t + s for t, s in zip(tokens, seps[1:], strict=True))
    return text, sorted(set(tokens))


@given(placeholder_texts(), st.data())
def test_replacement_never_touches_a_longer_placeholder(generated, data):
    text, tokens = generated
    chosen = data.draw(st.lists(st.sampled_from(tokens), min_size=1, unique=True))
    values = {name: "<" + name.upper() + ">" for name in chosen}

    result = replace_placeholders(text, values)

    # every other placeholder token survives untouched, in order
    kept = [t for t in re.findall(r"y\d+", text) if t not in values]
    assert re.findall(r"y\d+", result) == kept
    # every chosen one became its value, once per occurrence
    for name, value in values.items():
        assert result.count(value) == len(re.findall(rf"(?<!\w){name}(?!\w)", text))
