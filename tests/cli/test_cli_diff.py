"""``agentkit diff OLD NEW``: a step-aligned diff of two trace files."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.cli import main
from agentkit.core import textfiles
from agentkit.harness._runner import run_scenario
from agentkit.trace._read import expand_trace
from cli_helpers import Outcome
from tests.fuzz import mutated


@pytest.fixture
def trace_of(adding: Path, tmp_path: Path) -> Callable[..., Path]:
    """``trace_of(name, replace=(old, new))``: run `adding` under react (its script edited by
    ``replace``) and write the trace to ``<name>.json``."""

    def run(name: str, replace: tuple[str, str] = ("", "")) -> Path:
        text = adding.read_text(encoding="utf-8")
        adding.write_text(text.replace(*replace), encoding="utf-8")
        target = tmp_path / f"{name}.json"
        target.write_text(run_scenario(adding, "react").trace.to_json(), encoding="utf-8")
        adding.write_text(text, encoding="utf-8")
        return target

    return run


def test_identical_traces_exit_0(cli: Callable[..., Outcome],
                                 trace_of: Callable[..., Path]) -> None:
    result = cli("diff", trace_of("old"), trace_of("new"))

    assert (result.code, result.out) == (0, "traces are identical\n")


def test_changed_trace_exits_1_with_step_aligned_lines(cli: Callable[..., Outcome],
                                                       trace_of: Callable[..., Path]) -> None:
    old = trace_of("old")
    new = trace_of("new", replace=("Answer: 2 + 3 = 5", "Answer: five"))

    result = cli("diff", old, new)

    assert result.code == 1
    assert result.out.splitlines() == [
        'turn 1 ("What is 2 + 3?"):',
        "    step 2: changed",
        "      llm_calls[0].response.content:",
        "        also in: step output, memory, response",
        "        @@ -1,2 +1,2 @@",
        "         Thought: I can answer without using any more tools.",
        "        -Answer: 2 + 3 = 5",
        "        +Answer: five",
        "      usage: 1 LLM call, tokens 535+24 -> 535+20",
        "totals: tokens 1024+57 -> 1024+53",
    ]


class _Terminal(io.StringIO):
    """An output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _changed_word(trace_of: Callable[..., Path]) -> list[str]:
    return [str(trace_of("old")), str(trace_of("new", replace=("= 5", "= 5 exactly")))]


def test_changed_words_are_marked_in_plain_text_when_the_output_is_not_a_terminal(
        cli: Callable[..., Outcome], trace_of: Callable[..., Path]) -> None:
    result = cli("diff", *_changed_word(trace_of))

    assert "        ~Answer: 2 + 3 = 5{+ exactly+}" in result.out.splitlines()
    assert "\x1b[" not in result.out


def test_changed_words_are_coloured_on_a_terminal(trace_of: Callable[..., Path],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _Terminal()

    assert main(["diff", *_changed_word(trace_of)], out=out) == 1
    assert "        ~Answer: 2 + 3 = 5\x1b[32;4m exactly\x1b[0m" in out.getvalue().splitlines()


def test_no_color_in_the_environment_keeps_a_terminal_plain(
        trace_of: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = _Terminal()

    main(["diff", *_changed_word(trace_of)], out=out)

    assert "{+ exactly+}" in out.getvalue() and "\x1b[" not in out.getvalue()


@pytest.mark.parametrize(("flag", "coloured"), [("always", True), ("never", False)])
def test_the_color_flag_decides_whatever_the_output_is(
        trace_of: Callable[..., Path], flag: str, coloured: bool) -> None:
    out = _Terminal() if flag == "never" else io.StringIO()

    main(["diff", "--color", flag, *_changed_word(trace_of)], out=out)

    assert ("\x1b[32;4m exactly" in out.getvalue()) is coloured


def test_dropped_step_is_shown_as_dropped(cli: Callable[..., Outcome],
                                          trace_of: Callable[..., Path]) -> None:
    old = trace_of("old")
    new = trace_of("new", replace=("""\
      - |-
        Thought: I need to add 2 and 3.
        Action: add
        Action Input: {"a": 2, "b": 3}
""", ""))

    result = cli("diff", old, new)

    assert result.code == 1
    dropped = [line for line in result.out.splitlines() if "step 1: dropped" in line]
    assert len(dropped) == 1
    assert dropped[0].startswith('    step 1: dropped  - llm: "Thought: I need to add 2 and 3.')
    assert dropped[0].endswith('; tool: add({"a": 2, "b": 3}) -> "5"')


def test_malformed_json_exits_2_naming_file_line_and_column(
        cli: Callable[..., Outcome], trace_of: Callable[..., Path],
        write: Callable[[str, str], Path]) -> None:
    broken = write("broken.json", '{\n  "turns": [\n    {"user": "hi",}\n  ]\n}\n')

    result = cli("diff", trace_of("old"), broken)

    assert result.code == 2
    # after "not valid JSON: " comes the json module's own wording
    assert re.search(rf"^agentkit: error: {re.escape(str(broken))}:3:19: not valid JSON: \S",
                     result.err, re.MULTILINE), result.err


def test_a_trace_with_a_5000_digit_integer_exits_2_naming_file_line_and_column(
        cli: Callable[..., Outcome], trace_of: Callable[..., Path],
        write: Callable[[str, str], Path]) -> None:
    huge = write("huge.json", '{\n  "turns": [],\n  "steps": ' + "9" * 5_000 + "\n}\n")

    result = cli("diff", trace_of("old"), huge)

    assert result.code == 2
    assert result.err == (f"agentkit: error: {huge}:3:12: an integer of 5,000 digits, more "
                          "than the 4,300 agentkit reads\n  fix: shorten it, or write it as a "
                          "string\n")


def test_json_that_is_not_a_trace_exits_2(cli: Callable[..., Outcome],
                                          trace_of: Callable[..., Path],
                                          write: Callable[[str, str], Path]) -> None:
    other = write("package.json", '{"name": "web", "version": "1.0.0"}\n')

    result = cli("diff", other, trace_of("new"))

    assert result.code == 2
    # between the field and "; not an agentkit trace" is pydantic's word for a missing field
    assert re.search(rf"^agentkit: error: {re.escape(str(other))}:1: turns: .+; not an agentkit "
                     r"trace", result.err, re.MULTILINE), result.err


def test_missing_trace_file_exits_2(cli: Callable[..., Outcome], trace_of: Callable[..., Path],
                                    tmp_path: Path) -> None:
    result = cli("diff", trace_of("old"), tmp_path / "missing.json")

    assert result.code == 2
    assert f"{tmp_path / 'missing.json'}: cannot read trace: No such file or directory" in \
        result.err


def test_a_trace_that_never_ends_exits_2_instead_of_reading_forever(
        cli: Callable[..., Outcome], trace_of: Callable[..., Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfiles, "MAX_TEXT_BYTES", 1 << 20)  # 1 MiB of zeros, not 256

    result = cli("diff", trace_of("old"), "/dev/zero")

    assert result.code == 2
    assert "/dev/zero:1: larger than 1 MiB, the most agentkit reads" in result.err


def test_a_reference_that_cannot_be_followed_exits_2_naming_file_line_and_field(
        cli: Callable[..., Outcome], trace_of: Callable[..., Path]) -> None:
    old = trace_of("old")
    data = json.loads(old.read_text(encoding="utf-8"))
    data["turns"][0]["memory"][0] = {"ref": "/turns/7/memory", "start": 0, "count": 1}
    old.write_text(json.dumps(data, indent=2), encoding="utf-8")
    line = next(number for number, text in enumerate(old.read_text().splitlines(), start=1)
                if '"/turns/7/memory"' in text) - 1  # the item's opening brace

    result = cli("diff", old, trace_of("new"))

    assert result.code == 2
    assert result.err == (f"agentkit: error: {old}:{line}: turns.0.memory.0: `ref` "
                          "'/turns/7/memory' is not a list written before this one; not an "
                          "agentkit trace (a snapshot or --trace-dir output)\n")


def test_a_trace_of_format_2_diffs_step_by_step_with_one_of_format_3(
        cli: Callable[..., Outcome], trace_of: Callable[..., Path],
        write: Callable[[str, str], Path]) -> None:
    new = trace_of("new", replace=("Answer: 2 + 3 = 5", "Answer: five"))
    expanded = expand_trace(json.loads(trace_of("old").read_text(encoding="utf-8")))
    old = write("old2.json", json.dumps({**expanded, "format": 2, "turns": [
        {**turn, "memory": list(turn["memory"])} for turn in expanded["turns"]]}, indent=2))

    result = cli("diff", old, new)

    assert result.code == 1
    assert result.out.splitlines()[:3] == [
        'turn 1 ("What is 2 + 3?"):', "    step 2: changed",
        "      llm_calls[0].response.content:"]
    assert "format: 2 -> 3" in result.out


# ----------------------------------------------------------------- fuzzed input
_SNAPSHOT = json.loads((Path(__file__).parents[2] / "scenarios" / "__snapshots__" /
                        "single_tool_call" / "react.json").read_text(encoding="utf-8"))
_FUZZ_FOLDER = Path(tempfile.mkdtemp(prefix="agentkit-diff-fuzz-"))


@pytest.mark.slow  # property test at full size
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(_SNAPSHOT), st.booleans())
def test_diff_of_any_json_gives_a_result_or_exit_2_with_file_and_line(document, old_side):
    broken, good = _FUZZ_FOLDER / "broken.json", _FUZZ_FOLDER / "good.json"
    broken.write_text(json.dumps(document, indent=2), encoding="utf-8")
    good.write_text(json.dumps(_SNAPSHOT, indent=2), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()

    with contextlib.redirect_stderr(err):
        code = main(["diff", *map(str, (broken, good) if old_side else (good, broken))], out=out)

    assert code in (0, 1, 2)
    if code == 2:
        assert re.match(rf"agentkit: error: {re.escape(str(broken))}:\d+(:\d+)?: ", err.getvalue())
