"""Loading scenario files: a malformed one gets an error naming the file, the line and the
field, with a hint how to fix it; discovery finds scenario files and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentkit.harness import load
from agentkit.scenario import AGENT_TYPES, ScenarioError, discover_scenarios, load_scenario
from agentkit.scenario._loader import is_scenario_file
from mocks.foreign_yaml import CI_PIPELINE, K8S_MANIFEST
from tests.scenario_text import adding_scenario

from .conftest import MINIMAL, TRAJECTORY_SCENARIO

#: agentkit's fix line under a YAML syntax error.
_SYNTAX_FIX = ("  fix: check the indentation and quoting there (quote strings containing ': ' or "
               "'#', close every bracket and quote)")


def _error(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load(path)
    return str(info.value)


def _variant(old: str, new: str) -> str:
    assert old in MINIMAL
    return MINIMAL.replace(old, new)


# ----------------------------------------------------------------- a valid file
def test_a_valid_file_loads_with_its_path_and_fields(write_file):
    path = write_file("demo.yaml", MINIMAL)

    scenario = load(path)

    assert (scenario.name, scenario.path) == ("demo", str(path))
    assert [t.user for t in scenario.turns] == ["What is 2 + 3?"]
    assert list(scenario.agents) == ["function_calling"]


def test_the_name_defaults_to_the_file_stem(write_file):
    path = write_file("stem_name.yaml", MINIMAL.replace("name: demo\n", ""))

    assert load_scenario(path).name == "stem_name"


def test_an_unreadable_file_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "nope.yaml"

    assert _error(missing).startswith(f"{missing}: cannot read scenario file")


# ----------------------------------------------------------------- file-level problems
def test_invalid_yaml_syntax_names_line_and_column_with_a_fix(write_file):
    path = write_file("bad.yaml", "format: 1\nname: demo\nturns:\n  - user: [unclosed\n")

    message = _error(path)

    # between the prefix and the fix, PyYAML's words (which differ between its parsers and
    # versions); where the unclosed bracket began is agentkit's "(... at line 4)"
    assert re.fullmatch(rf"{re.escape(str(path))}:5:1: invalid YAML: .+ \(.+ at line 4\)\n"
                        rf"{re.escape(_SYNTAX_FIX)}", message), message


def test_a_bad_indentation_is_reported_at_its_line(write_file):
    path = write_file("indent.yaml", "format: 1\nname: demo\n  turns: []\n")

    message = _error(path)

    assert re.fullmatch(rf"{re.escape(str(path))}:3:8: invalid YAML: .+\n{re.escape(_SYNTAX_FIX)}",
                        message), message


def test_a_file_that_is_not_a_mapping_says_what_it_must_be(write_file):
    path = write_file("list.yaml", "- user: hi\n- user: there\n")

    assert _error(path) == (f"{path}:1: a scenario file must be a mapping with `format: 1`, "
                            "`name`, `turns` and `agents`")


def test_a_missing_format_says_to_add_it(write_file):
    path = write_file("noformat.yaml", MINIMAL.replace("format: 1\n", ""))

    assert _error(path) == (f"{path}:1: missing `format: 1` (the scenario format version); "
                            "add it as the first line")


def test_an_unsupported_format_names_the_supported_one(write_file):
    path = write_file("format2.yaml", "name: demo\n" + MINIMAL.replace("format: 1\nname: demo\n",
                                                                        "format: 2\n"))

    assert _error(path) == (f"{path}:2: format: format 2 is not supported (this agentkit reads "
                            "format 1)")


# ----------------------------------------------------------------- unknown fields
def test_an_unknown_top_level_field_suggests_the_closest_one(write_file):
    path = write_file("top.yaml", MINIMAL + "descripton: adds\n")

    assert _error(path) == (f"{path}:12: descripton: unknown field `descripton`; did you mean "
                            "`description`?")


def test_an_unknown_field_in_a_tool_suggests_the_closest_one(write_file):
    path = write_file("tool.yaml", _variant("  - ref: mocks.tools:add\n",
                                            "  - ref: mocks.tools:add\n    latncy: 1\n"))

    assert _error(path) == (f"{path}:5: tools.0.latncy: unknown field `latncy`; did you mean "
                            "`latency`?")


def test_an_unknown_field_in_a_script_reply_suggests_the_closest_one(write_file):
    path = write_file("reply.yaml", _variant("      - 2 + 3 = 5\n",
                                             "      - text: 2 + 3 = 5\n        chunkz: [a]\n"))

    assert _error(path) == (f"{path}:12: agents.function_calling.script.1.chunkz: unknown field "
                            "`chunkz`; did you mean `chunks`?")


def test_an_unknown_field_in_a_scripted_tool_call_suggests_the_closest_one(write_file):
    path = write_file("call.yaml", _variant("{name: add, args:", "{name: add, arg:"))

    assert _error(path) == (f"{path}:10: agents.function_calling.script.0.tool_calls.0.arg: "
                            "unknown field `arg`; did you mean `args`?")


def test_an_unknown_field_in_expect_suggests_the_closest_one(write_file):
    path = write_file("expect.yaml", MINIMAL + "expect:\n  max_step: 2\n")

    assert _error(path) == (f"{path}:13: expect.max_step: unknown field `max_step`; did you mean "
                            "`max_steps`?")


def test_an_unknown_field_inside_an_expected_memory_message_suggests_the_closest_one(write_file):
    path = write_file("memory.yaml",
                      MINIMAL + "expect:\n  memory:\n    - {role: user, contnt: x}\n")

    assert _error(path) == (f"{path}:14: expect.memory.0.contnt: unknown field `contnt`; did you "
                            "mean `content`?")


def test_an_unknown_field_without_a_close_match_lists_the_known_ones(write_file):
    path = write_file("far.yaml", MINIMAL + "expect:\n  tool_calls:\n    zzz: 1\n    calls: []\n")

    assert _error(path) == (f"{path}:14: expect.tool_calls.zzz: unknown field `zzz`; known fields "
                            "here: args, calls, match")


# ----------------------------------------------------------------- missing fields and types
def test_a_missing_required_field_says_to_add_it(write_file):
    path = write_file("noturns.yaml", _variant("turns:\n  - user: What is 2 + 3?\n", ""))

    assert _error(path) == f"{path}:1: turns: required field `turns` is missing; add it"


def test_a_missing_nested_field_is_reported_at_its_parent(write_file):
    path = write_file("nouser.yaml", _variant("  - user: What is 2 + 3?", "  - stream: true"))

    assert _error(path) == f"{path}:6: turns.0.user: required field `user` is missing; add it"


def test_a_wrongly_typed_value_says_what_was_expected_and_what_was_given(write_file):
    path = write_file("type.yaml", _variant("  - user: What is 2 + 3?\n",
                                            "  - user: What is 2 + 3?\n    stream: maybe\n"))

    assert _error(path) == f"{path}:7: turns.0.stream: expected `true` or `false`, got 'maybe'"


def test_a_scalar_where_a_list_belongs_says_how_to_write_a_list(write_file):
    path = write_file("tags.yaml", MINIMAL + "tags: basic\n")

    assert _error(path) == (f"{path}:12: tags: expected a list (`[a, b]` or one `- item` per "
                            "line), got 'basic'")


def test_an_empty_list_of_turns_says_to_add_one(write_file):
    path = write_file("noturn.yaml", _variant("turns:\n  - user: What is 2 + 3?\n", "turns: []\n"))

    assert _error(path) == (f"{path}:5: turns: needs at least 1 entry; add one (or a simulated "
                            "`user:`)")


def test_a_script_item_of_the_wrong_kind_lists_the_kinds_there_are(write_file):
    path = write_file("item.yaml", _variant("      - 2 + 3 = 5\n", "      - 5\n"))

    message = _error(path)

    assert message.startswith(f"{path}:11: agents.function_calling.script.1: a script item is "
                              "reply text (a string), a reply mapping")
    assert "or an error (`error: {type: rate_limit}`)" in message


def test_an_unknown_backend_error_type_suggests_the_closest_one(write_file):
    path = write_file("errtype.yaml", _variant("      - 2 + 3 = 5\n",
                                               "      - error: {type: ratelimit}\n"))

    assert _error(path) == (f"{path}:11: agents.function_calling.script.1.error.type: "
                            "'ratelimit' is not one of rate_limit, server, timeout, bad_request, "
                            "authentication; did you mean `rate_limit`?")


def test_every_problem_of_a_file_is_listed_one_per_line(write_file):
    path = write_file("two.yaml", MINIMAL + "tags: basic\ndescripton: adds\n")

    assert _error(path).splitlines() == [
        f"{path}:12: tags: expected a list (`[a, b]` or one `- item` per line), got 'basic'",
        f"{path}:13: descripton: unknown field `descripton`; did you mean `description`?",
    ]


def test_a_scenario_name_that_cannot_name_files_is_rejected(write_file):
    path = write_file("name.yaml", _variant("name: demo", "name: my demo"))

    assert _error(path) == (f"{path}:2: name: use letters, digits, '_', '-' and '.' only (it "
                            "names files)")


# ----------------------------------------------------------------- text matches
@pytest.mark.parametrize("match", ["{}", "{equals: a, contains: b}"],
                         ids=["none-given", "two-given"])
def test_a_text_match_needs_exactly_one_of_equals_contains_regex(write_file, match):
    path = write_file("match.yaml", MINIMAL + f"expect:\n  answer: {match}\n")

    assert _error(path) == (f"{path}:13: expect.answer: give exactly one of `equals`, `contains` "
                            "or `regex`")


def test_an_invalid_regex_is_reported_with_the_reason(write_file):
    path = write_file("regex.yaml", _variant(
        "  - user: What is 2 + 3?\n", "  - user: What is 2 + 3?\n    answer: {regex: '(5'}\n"))

    # the reason after "invalid regex '(5': " is Python's `re` module's
    assert re.fullmatch(rf"{re.escape(str(path))}:7: turns\.0\.answer: invalid regex '\(5': .+",
                        _error(path))


# ----------------------------------------------------------------- agents
def test_an_unknown_agent_type_suggests_the_closest_known_one(write_file):
    path = write_file("agent.yaml", _variant("  function_calling:", "  function_caling:"))

    assert _error(path) == (f"{path}:8: agents.function_caling: unknown agent type "
                            "`function_caling`; did you mean `function_calling`? (known: "
                            f"{', '.join(sorted(AGENT_TYPES))}; add yours under "
                            "[tool.agentkit.agent_types] in pyproject.toml)")


def test_agent_types_are_not_checked_unless_asked(write_file):
    path = write_file("custom.yaml", _variant("  function_calling:", "  my_agent:"))

    assert list(load_scenario(path).agents) == ["my_agent"]


def test_an_agent_type_with_both_script_and_recording_is_rejected(write_file):
    path = write_file("both.yaml", _variant("    script:\n",
                                            "    recording: cassettes/x.yaml\n    script:\n"))

    assert _error(path) == (f"{path}:9: agents.function_calling: give each agent type exactly "
                            "one of `script` or `recording`")


def test_an_agent_type_with_neither_script_nor_recording_is_rejected(write_file):
    path = write_file("neither.yaml", MINIMAL.split("    script:")[0] + "    latency: 1\n")

    assert _error(path) == (f"{path}:9: agents.function_calling: give each agent type exactly "
                            "one of `script` or `recording` (or give the scenario a "
                            "`trajectory:` to render its script from)")


def test_a_negative_llm_latency_is_rejected_with_the_value(write_file):
    path = write_file("llmlat.yaml", _variant("    script:\n", "    latency: -0.5\n    script:\n"))

    assert _error(path) == f"{path}:9: agents.function_calling.latency: must be >= 0, got -0.5"


# ----------------------------------------------------------------- tools
def test_a_negative_tool_latency_is_rejected_with_the_value(write_file):
    path = write_file("lat.yaml", _variant("  - ref: mocks.tools:add\n",
                                           "  - ref: mocks.tools:add\n    latency: -1\n"))

    assert _error(path) == f"{path}:5: tools.0.latency: must be >= 0, got -1"


def test_failure_call_numbers_must_be_positive(write_file):
    path = write_file("fail.yaml", _variant("  - ref: mocks.tools:add\n",
                                            "  - ref: mocks.tools:add\n    failures: [2, 0]\n"))

    assert _error(path) == (f"{path}:5: tools.0.failures: call numbers start at 1 (the first "
                            "call), got 0")


@pytest.mark.parametrize("ref", ["mocks.tools.add", "mocks/tools:add", "add", "mocks.tools:"])
def test_an_import_ref_of_the_wrong_shape_shows_the_right_one(write_file, ref):
    path = write_file("ref.yaml", _variant("mocks.tools:add", f"'{ref}'"))

    assert _error(path) == (f"{path}:4: tools.0.ref: {ref!r} is not an import ref; write "
                            "`package.module:name`")


# ----------------------------------------------------------------- thresholds
def test_cost_thresholds_load_per_metric_and_default_to_none(write_file):
    path = write_file("limits.yaml", MINIMAL + "thresholds:\n  tokens: {relative: 0.25, "
                                               "absolute: 100}\n  wall_time: {absolute: 2}\n")

    thresholds = load(path).thresholds

    assert (thresholds.tokens.relative, thresholds.tokens.absolute) == (0.25, 100)
    assert (thresholds.wall_time.relative, thresholds.wall_time.absolute) == (None, 2)
    assert thresholds.steps is None and thresholds.llm_calls is None


def test_a_threshold_for_an_unknown_metric_suggests_the_closest_one(write_file):
    path = write_file("limits.yaml", MINIMAL + "thresholds:\n  token: {relative: 0.2}\n")

    assert _error(path) == (f"{path}:13: thresholds.token: unknown field `token`; did you mean "
                            "`tokens`?")


def test_a_negative_threshold_is_rejected_with_its_line(write_file):
    path = write_file("limits.yaml", MINIMAL + "thresholds:\n  steps:\n    relative: -0.1\n")

    assert _error(path) == f"{path}:14: thresholds.steps.relative: must be >= 0, got -0.1"


# ----------------------------------------------------------------- discovery
def test_discovery_returns_scenario_files_sorted_and_recursively(write_file, tmp_path):
    for name in ("b.yaml", "a.yml", "sub/c.yaml", "notes.txt", "sub/readme.md"):
        write_file(name, MINIMAL)

    found = discover_scenarios(tmp_path)

    assert found == [tmp_path / "a.yml", tmp_path / "b.yaml", tmp_path / "sub" / "c.yaml"]


def test_discovery_skips_snapshots_and_cassettes(write_file, tmp_path):
    write_file("s.yaml", MINIMAL)
    write_file("__snapshots__/s/react.yaml", "x: 1\n")
    write_file("cassettes/s.react.yaml", "format: 1\nexchanges: []\n")

    assert discover_scenarios(tmp_path) == [tmp_path / "s.yaml"]


def test_discovery_skips_yaml_files_that_are_not_scenarios(write_file, tmp_path):
    write_file("s.yaml", MINIMAL)
    write_file("k8s.yaml", K8S_MANIFEST)
    write_file("ci.yml", CI_PIPELINE)

    assert discover_scenarios(tmp_path) == [tmp_path / "s.yaml"]


@pytest.mark.parametrize("text, expected", [
    (MINIMAL, True),
    ("format: 1\nturns:\n  - user: [unclosed\n", True),  # broken, but agentkit's: report it
    ("turns: [{user: hi}]\nagents: {react: {script: [hi]}}\n", True),  # `format` missing
    (K8S_MANIFEST, False),
    ("format: json\noutput: out.json\n", False),
    (CI_PIPELINE, False),
    ("metadata:\n  format: 1\n  turns: []\n", False),  # not at the top level
    ("", False),
])
def test_a_yaml_file_is_a_scenario_when_its_top_level_has_agentkit_keys(write_file, text,
                                                                         expected):
    assert is_scenario_file(write_file("x.yaml", text)) is expected


def test_a_file_that_is_not_yaml_is_never_a_scenario(write_file):
    assert not is_scenario_file(write_file("x.txt", MINIMAL))


def test_discovery_of_a_file_returns_that_file(write_file):
    path = write_file("only.yaml", MINIMAL)

    assert discover_scenarios(path) == [path]


def test_discovery_of_a_missing_path_is_an_error(tmp_path):
    with pytest.raises(ScenarioError, match="no such scenario file or directory"):
        discover_scenarios(tmp_path / "missing")


def test_discovery_of_a_name_too_long_for_the_file_system_is_an_error_naming_it(tmp_path):
    long_name = tmp_path / ("a" * 300)

    with pytest.raises(ScenarioError, match=f"^{long_name}: cannot read: File name too long$"):
        discover_scenarios(long_name)


def test_discovery_reads_only_the_start_of_a_yaml_file_that_never_ends(tmp_path):
    (tmp_path / "zeros.yaml").symlink_to("/dev/zero")  # read whole, it never ended

    assert discover_scenarios(tmp_path) == []


def test_discovery_finds_the_bundled_scenarios_but_not_their_snapshots():
    root = Path(__file__).parents[2] / "scenarios"

    found = discover_scenarios(root)

    assert {"single_tool_call", "slow_tools", "streamed_answer"} <= {p.stem for p in found}
    assert not [p for p in found if {"__snapshots__", "cassettes"} & set(p.parts)]


def test_a_duplicate_key_is_an_error_naming_both_lines(write_file):
    path = write_file("dup.yaml", MINIMAL + "expect:\n  max_steps: 2\nexpect:\n  max_steps: 3\n")

    assert _error(path) == (f"{path}:14: expect: duplicate key `expect` (first at line 12); merge "
                            "the two or remove one")


def test_an_unknown_match_mode_suggests_the_closest_one(write_file):
    path = write_file("mode.yaml", MINIMAL + "expect:\n  tool_calls:\n    match: unorderd\n"
                                             "    calls: []\n")

    assert _error(path) == (f"{path}:14: expect.tool_calls.match: 'unorderd' is not one of "
                            "strict, unordered, subset, superset; did you mean `unordered`?")


_BOMB = "".join([f'a: &a [{",".join(["lol"] * 9)}]\n']
                + [f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n"
                   for a, b in zip("abcdefgh", "bcdefghi", strict=True)])


def test_an_alias_bomb_scenario_is_an_error_with_its_line_not_a_hang(write_file):
    path = write_file("bomb.yaml", "format: 1\nname: bomb\nlol:\n" + "".join(
        f"  {line}\n" for line in _BOMB.splitlines()))

    assert _error(path).startswith(f"{path}:8: invalid YAML: aliases expand to more than")


@pytest.mark.slow  # a property test at full size
@pytest.mark.parametrize("depth", [101, 1001, 100_000])
def test_a_scenario_nested_too_deep_gets_agentkits_error_with_the_limit_and_the_fix(
        write_file, depth):
    path = write_file("deep.yaml", "format: 1\nname: deep\ntags: " + "[" * depth + "]" * depth)

    assert _error(path) == (f"{path}:3:{6 + 100}: invalid YAML: nested more than 100 levels "
                            "deep, the most agentkit reads\n  fix: flatten the data there to at "
                            "most 100 levels of nested lists and mappings (deeper data is almost "
                            "always a generated or hostile file)")


def test_a_scenario_containing_itself_is_an_error_with_its_line(write_file):
    path = write_file("loop.yaml", "format: 1\nname: loop\ntags: &a [*a]\n")

    assert _error(path).startswith(f"{path}:3: invalid YAML: the alias *a is inside the node")


@pytest.mark.parametrize("old, new, line, field", [
    ("  - ref: mocks.tools:add\n", "  - ref: mocks.tools:add\n    latency: .inf\n", 5,
     "tools.0.latency"),
    ("    script:\n", "    latency: 1.0e+8\n    script:\n", 9, "agents.function_calling.latency"),
    ("      - 2 + 3 = 5\n", "      - {text: '2 + 3 = 5', latency: .nan}\n", 11,
     "agents.function_calling.script.1.latency"),
])
def test_an_endless_or_huge_latency_is_an_error_naming_line_and_field(write_file, old, new,
                                                                       line, field):
    path = write_file("lat.yaml", _variant(old, new))

    message = _error(path)

    assert message.startswith(f"{path}:{line}: {field}: must be ")
    assert "finite number" in message or "<= 86400" in message


def test_chunks_that_do_not_join_to_the_text_are_an_error_at_the_reply(write_file):
    path = write_file("chunks.yaml", _variant(
        "      - 2 + 3 = 5\n", "      - {text: '2 + 3 = 5', chunks: ['2 + ', '3 = 6']}\n"))

    assert _error(path) == (f"{path}:11: agents.function_calling.script.1: `chunks` must join "
                            "to `text` (the streamed pieces of the reply); leave `text` out to "
                            "make it their concatenation")


def test_a_scenario_file_that_is_not_utf8_is_an_error_at_its_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("format: 1\nname: caf\xe9\n".encode("latin-1"))

    assert _error(path) == (f"{path}:2:10: not UTF-8 text (byte 0xe9); save the file as UTF-8")



# ----------------------------------------------------------------- every problem in one pass
_KNOWN = (f"(known: {', '.join(sorted(AGENT_TYPES))}; add yours under "
          "[tool.agentkit.agent_types] in pyproject.toml)")

_MANY_MISTAKES = """\
format: 1
name: multi
tools:
  - ref: mocks.tools:add
turns:
  - user: What is 2 + 3?
    images: [cat.png]
trajectory:
  - call: ad
    args: {a: 2, b: 3}
  - answer: "2 + 3 = {$1}"
expect:
  max_step: 3
agents: [react, reakt]
name: again
"""


def _load_error(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return str(info.value)


def test_a_file_with_a_problem_in_every_stage_reports_them_all_at_once_in_file_order(
        write_file, tmp_path):
    path = write_file("multi.yaml", _MANY_MISTAKES)

    # loading reports the file's own problems; what needs the registry and the tools' code
    # is planning's, once the file is valid
    assert _load_error(path).splitlines() == [
        f"{path}:7: turns.0.images.0: no image file `cat.png` ({tmp_path / 'cat.png'} does not "
        "exist; image paths are relative to the scenario file)",
        f"{path}:13: expect.max_step: unknown field `max_step`; did you mean `max_steps`?",
        f"{path}:15: name: duplicate key `name` (first at line 2); merge the two or remove one",
    ]
    fixed = write_file("multi.yaml", _MANY_MISTAKES.replace("    images: [cat.png]\n", "")
                       .replace("max_step:", "max_steps:").replace("name: again\n", ""))
    assert _error(fixed).splitlines() == [
        f"{path}:8: trajectory.0.call: unknown tool `ad`; did you mean `add`? (the scenario's "
        "tools: add)",
        f"{path}:13: agents.reakt: unknown agent type `reakt`; did you mean `react`? {_KNOWN}",
    ]


def test_a_missing_format_is_reported_with_the_files_other_problems(write_file):
    path = write_file("noformat.yaml", MINIMAL.replace("format: 1\n", "") + "tags: basic\n")

    assert _error(path).splitlines() == [
        f"{path}:1: missing `format: 1` (the scenario format version); add it as the first line",
        f"{path}:11: tags: expected a list (`[a, b]` or one `- item` per line), got 'basic'",
    ]


def test_a_wrong_tool_name_is_found_in_a_trajectory_with_a_malformed_step(write_file):
    path = write_file("traj.yaml", adding_scenario("traj", """\
trajectory:
  - call: ad
    args: {a: 2, c: 3}
  - answr: done
agents: [react]
"""))

    assert _error(path).splitlines() == [
        f"{path}:10: trajectory.1.answr: unknown field `answr`; did you mean `answer`?",
    ]
    # the tools' names are planning's to check (their refs are imported), once the file is valid
    write_file("traj.yaml", path.read_text(encoding="utf-8").replace("answr:", "answer:"))
    assert _error(path).splitlines() == [
        f"{path}:8: trajectory.0.call: unknown tool `ad`; did you mean `add`? (the scenario's "
        "tools: add)",
    ]


def test_a_wrong_argument_name_is_found_in_a_trajectory_with_a_malformed_step(write_file):
    path = write_file("traj.yaml", adding_scenario("traj", """\
trajectory:
  - call: add
    args: {a: 2, c: 3}
  - answr: done
agents: [react]
"""))

    assert _error(path).splitlines() == [
        f"{path}:10: trajectory.1.answr: unknown field `answr`; did you mean `answer`?",
    ]
    write_file("traj.yaml", path.read_text(encoding="utf-8").replace("answr:", "answer:"))
    assert _error(path).splitlines() == [
        f"{path}:9: trajectory.0.args.c: `add` has no parameter `c`; (its parameters: a, b)",
        f"{path}:9: trajectory.0.args: `add` needs b; add it",
    ]


def test_a_malformed_field_of_a_tool_does_not_hide_a_wrong_tool_name(write_file):
    path = write_file("traj.yaml", adding_scenario("traj", """\
trajectory:
  - {call: ad, args: {a: 2, b: 3}}
  - answer: done
agents: [react]
""").replace("  - ref: mocks.tools:add\n", "  - ref: mocks.tools:add\n    latency: -1\n"))

    assert _error(path).splitlines() == [f"{path}:5: tools.0.latency: must be >= 0, got -1"]
    write_file("traj.yaml", path.read_text(encoding="utf-8").replace("latency: -1", "latency: 1"))
    assert _error(path).splitlines() == [
        f"{path}:9: trajectory.0.call: unknown tool `ad`; did you mean `add`? (the scenario's "
        "tools: add)",
    ]


def test_an_unknown_agent_type_named_in_a_list_is_reported_at_its_item(write_file):
    path = write_file("list.yaml", TRAJECTORY_SCENARIO.replace("agents: [mine]\n",
                                                               "agents:\n  - react\n  - reakt\n"))

    assert _error(path) == (f"{path}:13: agents.reakt: unknown agent type `reakt`; did you mean "
                            f"`react`? {_KNOWN}")


# ----------------------------------------------------------------- expected tool calls
def _expecting(calls: str) -> str:
    """MINIMAL expecting these ``expect.tool_calls.calls`` entries (the first on line 15)."""
    return MINIMAL + "expect:\n  tool_calls:\n    calls:\n" + calls


@pytest.mark.parametrize("number", [0, 3])
def test_after_naming_no_entry_is_an_error_at_the_after_element(write_file, number):
    path = write_file("after.yaml", _expecting(f"      - {{name: add}}\n"
                                               f"      - {{name: add, after: [1, {number}]}}\n"))

    assert _error(path) == (f"{path}:16: expect.tool_calls.calls.1.after.1: after: {number} "
                            "names no entry of `calls` (entries are numbered from 1; this list "
                            "has 2)")


def test_after_naming_a_tool_instead_of_an_entry_number_says_it_takes_numbers(write_file):
    path = write_file("after.yaml", _expecting("      - {name: add}\n"
                                               "      - {name: add, after: [add]}\n"))

    assert _error(path) == (f"{path}:16: expect.tool_calls.calls.1.after: `after` lists the "
                            "numbers of earlier entries, counted from 1 (`after: [1, 2]`), not "
                            "tool names: got 'add'")


def test_a_trajectory_after_naming_a_tool_says_it_takes_numbers(write_file):
    path = write_file("traj.yaml", TRAJECTORY_SCENARIO.replace(
        "  - answer:", "  - {call: add, args: {a: 1, b: 1}, after: [add]}\n  - answer:"))

    assert "trajectory.1.after: `after` lists the numbers of earlier entries, counted from 1" \
        in _error(path)


def test_after_naming_its_own_entry_is_an_error(write_file):
    path = write_file("after.yaml", _expecting("      - {name: add}\n"
                                               "      - name: add\n        after:\n"
                                               "          - 2\n"))

    assert _error(path) == (f"{path}:18: expect.tool_calls.calls.1.after.0: after: 2 is this "
                            "entry itself (entry 2 can only follow entry 1)")


def test_after_naming_a_later_entry_is_an_error(write_file):
    path = write_file("after.yaml", _expecting("      - {name: add, after: [2]}\n"
                                               "      - {name: add}\n"))

    assert _error(path) == (f"{path}:15: expect.tool_calls.calls.0.after.0: after: 2 is a later "
                            "entry (it is the first entry, which follows none); list the calls "
                            "that must happen first before the ones that follow them")


def test_after_naming_earlier_entries_loads(write_file):
    path = write_file("after.yaml", _expecting("      - {name: add}\n      - {name: add}\n"
                                               "      - {name: add, after: [1, 2]}\n"))

    calls = load_scenario(path).expect.tool_calls.calls

    assert [call.after for call in calls] == [[], [], [1, 2]]


def test_after_in_an_agent_types_expect_counts_the_entries_of_its_own_list(write_file):
    path = write_file("after.yaml", MINIMAL + "    expect:\n      tool_calls:\n        calls:\n"
                                              "          - {name: add, after: [1]}\n")

    assert _error(path) == (f"{path}:15: agents.function_calling.expect.tool_calls.calls.0."
                            "after.0: after: 1 is this entry itself (it is the first entry, "
                            "which follows none)")


def test_a_misspelt_error_flag_suggests_true(write_file):
    path = write_file("err.yaml", _expecting("      - {name: add, error: tru}\n"))

    assert _error(path) == (f"{path}:15: expect.tool_calls.calls.0.error: expected `true`, "
                            "`false` or what the error text must match (`{contains: ...}`, "
                            "`{equals: ...}`, `{regex: ...}`), got 'tru'; did you mean `true`?")


def test_an_unknown_key_in_an_expected_error_is_reported_once_with_a_did_you_mean(write_file):
    path = write_file("err.yaml", _expecting("      - {name: add, error: {contain: x}}\n"))

    assert _error(path) == (f"{path}:15: expect.tool_calls.calls.0.error.contain: unknown field "
                            "`contain`; did you mean `contains`?")


def test_an_unknown_key_in_an_expected_output_gets_a_did_you_mean(write_file):
    path = write_file("out.yaml", _expecting("      - {name: add, output: {equal: '5'}}\n"))

    assert _error(path) == (f"{path}:15: expect.tool_calls.calls.0.output.equal: unknown field "
                            "`equal`; did you mean `equals`?")


def test_an_output_on_a_call_expected_to_fail_is_an_error_at_the_output_line(write_file):
    path = write_file("both.yaml", _expecting("      - name: add\n        error: true\n"
                                              "        output: {contains: '5'}\n"))

    assert _error(path) == (f"{path}:17: expect.tool_calls.calls.0.output: `output` is what a "
                            "successful call returns; a call expected to fail (`error`) has "
                            "none: give one of them")


@pytest.mark.parametrize("value, hint", [("alow", "; did you mean `allow`?"), ("-1", "")])
def test_tool_errors_is_allow_or_a_count(write_file, value, hint):
    path = write_file("te.yaml", MINIMAL + f"expect:\n  tool_errors: {value}\n")

    assert _error(path) == (f"{path}:13: expect.tool_errors: expected `allow` or a whole number "
                            f">= 0, got {value if value == '-1' else repr(value)}{hint}")


def test_a_problem_quoting_a_line_break_of_the_file_stays_on_one_line(write_file):
    path = write_file("nl.yaml", _variant("  function_calling:", '  "fn\\ncalling":'))

    assert _error(path).splitlines() == [
        f"{path}:8: agents.fn\\ncalling: unknown agent type `fn\\ncalling`; did you mean "
        f"`function_calling`? {_KNOWN}"]
