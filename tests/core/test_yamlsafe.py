"""Safe YAML loading: bounded depth and alias expansion, errors with lines, the C loader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from agentkit.core import yamlsafe
from agentkit.core.yamlsafe import MAX_DEPTH, YamlError, parse_yaml
from agentkit.llms.cassette import dump_yaml

#: 9 levels of 9 aliases: ~387 million nodes once expanded, from 342 bytes.
ALIAS_BOMB = "".join(
    [f'a: &a [{",".join(["lol"] * 9)}]\n']
    + [f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)])


def test_an_alias_bomb_is_an_error_at_the_line_where_the_expansion_gets_too_big():
    with pytest.raises(YamlError, match="aliases expand to more than 10,000 nodes") as info:
        parse_yaml(ALIAS_BOMB)

    assert info.value.line == 5


def test_an_alias_inside_the_node_it_names_is_an_error_not_a_recursive_structure():
    with pytest.raises(YamlError, match=r"the alias \*a is inside the node &a") as info:
        parse_yaml("format: 1\ntags: &a [*a]\n")

    assert info.value.line == 2


def _block(depth: int) -> str:
    return "".join(" " * i + "k:\n" for i in range(depth)) + " " * depth + "v\n"


#: Too deep for agentkit, at line 1 or 101: flow, block and mixed nesting; 1,001+ levels pass
#: libyaml's own limit (PyYAML 6.0.4's wheels), 100,000 would crash a recursive composer.
TOO_DEEP = {
    "flow 101": ("[" * 101 + "]" * 101, 1),
    "flow 1,001": ("[" * 1001 + "]" * 1001, 1),
    "flow 100,000": ("[" * 100_000 + "]" * 100_000, 1),
    "flow mappings 1,001": ("{a: " * 1001 + "1" + "}" * 1001, 1),
    "block 101": (_block(101), 101),
    "block 1,001": (_block(1001), 101),
    "block sequence 1,001": ("- " * 1001 + "x\n", 1),
    "unclosed flow 5,000": ("x: " + "[" * 5000, 1),
}


@pytest.fixture(params=["libyaml", "pure-python"])
def loader(request, monkeypatch):
    """Both parsers agentkit may run on: libyaml's (when PyYAML has it) and PyYAML's own."""
    if request.param == "libyaml":
        if not hasattr(yaml, "CSafeLoader"):
            pytest.fail("this PyYAML has no libyaml loader; agentkit's default is libyaml")
        monkeypatch.setattr(yamlsafe, "LOADER", yaml.CSafeLoader)
    else:
        monkeypatch.setattr(yamlsafe, "LOADER", yaml.SafeLoader)
    return request.param


#: flow nesting past libyaml's limit costs the pure-Python scanner a second or more: that parser
#: runs these at full size in the slow lane (the libyaml cases take the pure-Python path too)
_SLOW_IN_PURE_PYTHON = {"flow 1,001", "flow 100,000", "unclosed flow 5,000"}


@pytest.mark.parametrize("loader, text, line", [
    pytest.param(parser, text, line, id=f"{parser}-{name}",
                 marks=[pytest.mark.slow] if parser == "pure-python" and name in _SLOW_IN_PURE_PYTHON
                 else [])
    for parser in ("libyaml", "pure-python") for name, (text, line) in TOO_DEEP.items()],
    indirect=["loader"])
def test_nesting_deeper_than_the_limit_is_agentkits_error_at_its_line_whatever_the_parser(
        loader, text, line):
    with pytest.raises(YamlError) as info:
        parse_yaml(text)

    assert info.value.problem == f"nested more than {MAX_DEPTH} levels deep, the most agentkit reads"
    assert info.value.line == line
    assert info.value.fix is not None and f"at most {MAX_DEPTH} levels" in info.value.fix


def test_a_syntax_error_is_still_reported_as_one_when_libyaml_rejects_the_text(loader):
    with pytest.raises(YamlError) as info:
        parse_yaml("format: 1\nname: [a, b\nturns: x\n")

    assert "nested" not in info.value.problem
    assert info.value.line is not None and info.value.line >= 2


def test_nesting_up_to_the_limit_loads():
    data, _ = parse_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH)

    assert str(data) == "[" * MAX_DEPTH + "]" * MAX_DEPTH


def test_small_aliases_still_work():
    data, _ = parse_yaml("base: &b {x: 1}\ncopy: *b\n")

    assert data == {"base": {"x": 1}, "copy": {"x": 1}}


def test_only_plain_data_tags_are_accepted():
    with pytest.raises(YamlError, match="could not determine a constructor"):
        parse_yaml("x: !!python/object/apply:os.system ['true']\n")


@pytest.mark.parametrize("value", ["!!float name", "!!int abc", "!!int 0x", "!!bool maybe",
                                   "!!timestamp soon", "!!timestamp 2020-13-45"])
def test_a_value_its_tag_cannot_read_is_an_error_at_its_line_not_a_raw_exception(value):
    with pytest.raises(YamlError, match="is not a valid !!") as info:
        parse_yaml(f"format: 1\nname: {value}\n")

    assert (info.value.line, info.value.column) == (2, 7)


def test_a_syntax_error_names_line_and_column_and_how_to_fix_it():
    with pytest.raises(YamlError) as info:
        parse_yaml("a: 1\nb: [unclosed\n")

    assert (info.value.line, info.value.column) == (3, 1)
    assert "quote" in (info.value.fix or "")


def test_an_error_at_the_end_of_a_last_line_without_a_newline_is_on_that_line(loader):
    with pytest.raises(YamlError) as info:
        parse_yaml("a: 1\nb: [")

    assert (info.value.line, info.value.column) == (2, 5)


def test_a_control_character_is_an_error_with_its_line_and_column():
    with pytest.raises(YamlError, match="character #x0007 is not allowed") as info:
        parse_yaml("a: 1\nb: x\x07\n")

    assert (info.value.line, info.value.column) == (2, 5)


def test_locations_give_the_line_of_every_key_and_value():
    _, where = parse_yaml("a:\n  b: [1, 2]\n  c: x\n")

    assert (where.line(("a", "b"), key=True), where.line(("a", "c")), where.line(("a", "z"))) \
        == (2, 3, 2)


def test_the_c_loader_is_used_when_pyyaml_has_it():
    expected = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

    assert yamlsafe.LOADER is expected


@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"# ,\n\t?%@`\\x0\x00\x85é")),
               max_size=60))
def test_any_text_loads_or_is_a_yaml_error(text):
    try:
        parse_yaml(text)
    except YamlError as exc:
        assert exc.line is None or exc.line >= 1


_TAGS = ["!!float", "!!int", "!!bool", "!!null", "!!timestamp", "!!binary", "!!str", "!!set",
         "!!omap", "!!pairs", "!!seq", "!!map", "!!merge", "!!value"]


@given(st.lists(st.tuples(st.sampled_from(_TAGS),
                          st.text(alphabet=st.sampled_from(list("0123456789-:.+eExTtZa[]{} ")),
                                  max_size=12)), min_size=1, max_size=4))
def test_any_tagged_value_loads_or_is_a_yaml_error_with_its_line(items):
    text = "".join(f"k{n}: {tag} {value}\n" for n, (tag, value) in enumerate(items))
    try:
        parse_yaml(text)
    except YamlError as exc:
        assert exc.line is not None and 1 <= exc.line <= len(items) + 1


_LIKE_PYYAML = """\
text: hello
numbers: [0, -7, +12, 1.5, -.25, 3., 1.5e3, 007, 0x1F, 1_000, 1:30, .inf]
flags: [true, No, on, OFF]
nothing: [~, null, ]
tagged: [!!str 12, !!int "42", !!float "2", !!binary aGk=, !!timestamp 2026-11-27]
shared: &part {a: 1}
again: *part
base: &base {x: 1, y: 2}
merged: {<<: *base, y: 3}
"""


def test_plain_data_is_built_as_pyyamls_safe_loader_builds_it():
    data, _ = parse_yaml(_LIKE_PYYAML)
    expected = yaml.load(_LIKE_PYYAML, Loader=yaml.SafeLoader)
    assert data == expected
    assert [type(v) for v in data["numbers"]] == [type(v) for v in expected["numbers"]]
    assert [type(v) for v in data["tagged"]] == [type(v) for v in expected["tagged"]]


def test_an_alias_is_the_same_object_as_its_anchor_as_with_pyyaml():
    data, _ = parse_yaml("shared: &part {a: 1}\nagain: *part\n")
    assert data["again"] is data["shared"]


def test_an_unhashable_key_is_an_error_at_its_line():
    with pytest.raises(YamlError, match="unhashable") as caught:
        parse_yaml("ok: 1\n? [a, b]\n: value\n")
    assert caught.value.line == 2


_ROOT = Path(__file__).resolve().parents[2]
_COMMITTED = sorted(p for folder in ("scenarios", "examples", "tests")
                    for p in (_ROOT / folder).rglob("*.yaml"))


def _careful(text):
    """What the careful path builds: every check first, then libyaml's composer and
    PyYAML's constructor for anything but plain data."""
    return yamlsafe._checked(text)[0]


@pytest.mark.slow  # a property test at full size
@pytest.mark.parametrize("path", _COMMITTED, ids=[str(p.relative_to(_ROOT)) for p in _COMMITTED])
def test_every_committed_yaml_file_loads_as_pyyamls_safe_loader_loads_it(path):
    text = path.read_text(encoding="utf-8")
    try:
        expected = _careful(text)
    except YamlError:
        pytest.skip("not valid YAML on purpose (a malformed-input fixture)")
    assert parse_yaml(text)[0] == expected


def test_a_cassette_loads_in_one_pass_over_the_parsers_events(tmp_path):
    cassette = _ROOT / "scenarios" / "cassettes"
    text = next(iter(sorted(cassette.rglob("*.yaml")))).read_text(encoding="utf-8")

    quick = yamlsafe._plain_data(text)

    assert quick is not None and quick[0] == _careful(text)


_SCALARS = (st.text(max_size=30) | st.integers() | st.booleans() | st.none()
            | st.floats(allow_nan=False) | st.sampled_from(
                ["yes", "No", "on", "~", "null", "0x1F", "1_000", "1:30", "007", ".inf", "-.5",
                 "2026-11-27", "<<", "=", "!x", "&a", "*a", "a: b", "- x", "#", "'q'", ""]))
_DATA = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4),
                     max_leaves=20)


def _values(data):
    """Every scalar of ``data``, in order (1 == 1.0 == True: equality alone misses a type)."""
    if isinstance(data, dict):
        return [v for key, value in data.items() for v in (key, *_values(value))]
    if isinstance(data, list):
        return [v for item in data for v in _values(item)]
    return [data]


@pytest.mark.slow  # property test at full size
@given(_DATA, st.booleans())
def test_written_data_loads_back_as_pyyamls_safe_loader_builds_it(data, as_cassettes):
    text = (dump_yaml({"data": data}) if as_cassettes  # multi-line strings as | blocks
            else yaml.safe_dump({"data": data}, allow_unicode=True, sort_keys=False, width=20))

    assert parse_yaml(text)[0] == _careful(text)
    assert [type(v) for v in _values(parse_yaml(text)[0]["data"])] == [type(v) for v in _values(data)]


@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"# ,\n\t?%@`\\x01.~<=\x85é")),
               max_size=60))
def test_what_the_one_pass_loader_accepts_it_builds_as_pyyaml_does(text):
    quick = yamlsafe._plain_data(text)
    if quick is not None:
        assert quick[0] == _careful(text)
        assert [type(v) for v in _values(quick[0])] == [type(v) for v in _values(_careful(text))]


def test_a_repeated_key_is_still_reported_with_both_lines():
    _, where = parse_yaml("a: 1\nb: 2\na: 3\n")

    assert where.duplicates == [(("a",), 3, 1)]


@pytest.mark.parametrize("where", ["n: {}\n", "a:\n  - b: {}\n", "unknown: [1, {}]\n",
                                   "a: &x 1\nb: {}\n"])
def test_an_integer_longer_than_python_reads_is_an_error_at_its_line(where):
    # the one-pass loader (plain data) and the careful one (an anchor) alike
    text = where.format("9" * 5_000)

    with pytest.raises(YamlError, match="an integer of 5,000 digits, more than the 4,300 "
                                        "agentkit reads") as info:
        parse_yaml(text)

    assert info.value.line == text.count("\n")
