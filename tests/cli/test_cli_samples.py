"""``agentkit record --samples N`` and the commands that replay a sampled recording."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from agentkit.llms.mock import tool_call
from cli_helpers import FAKE_URL, Outcome
from mocks.openai_server import FakeOpenAIServer

ANSWERS = ["2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5"]


def _script(answers: list[str]) -> list[object]:
    return [item for answer in answers for item in (tool_call("add", a=2, b=3), answer)]


def _record(cli: Callable[..., Outcome], adding: Path, *options: str) -> Outcome:
    return cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL,
               "--temperature", "0.8", *options)


def _cassette(adding: Path) -> dict:
    path = adding.parent / "cassettes" / "adding.function_calling.yaml"
    return yaml.safe_load(path.read_text("utf-8"))


def test_record_samples_records_each_sample_with_its_own_seed(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_openai_endpoint(_script(ANSWERS))

    result = _record(cli, adding, "--samples", "3", "--seed", "7")

    assert [body["seed"] for body in server.requests] == [7, 7, 8, 8, 9, 9]
    assert [body["temperature"] for body in server.requests] == [0.8] * 6
    data = _cassette(adding)
    assert (data["samples"], data["sampling"]) == (3, {"temperature": 0.8, "seed": 7})
    assert "seed" not in str(data["exchanges"][0]["request"])  # replays hash without it
    assert result.code == 1  # one sample of three misses the answer: the case fails its gate
    assert "pass rate 67% (2/3, 95% interval 21-94%) · flaky" in result.out
    assert "wrote " in result.out and "all 3 samples" in result.out


def test_run_judges_every_recorded_sample(cli: Callable[..., Outcome], adding: Path,
                                          fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(ANSWERS))
    _record(cli, adding, "--samples", "3")
    adding.write_text(adding.read_text("utf-8") + "min_pass_rate: 0.5\n", "utf-8")

    result = cli("run", adding, "--agents", "function_calling")

    assert result.code == 0, result.out
    assert "PASS  adding[function_calling]" in result.out
    assert "3 samples: pass rate 67% (2/3" in result.out


def test_run_fails_a_case_below_min_pass_rate_beyond_noise_saying_why(
        cli: Callable[..., Outcome], adding: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(["five", "six", "seven", "eight", "2 + 3 = 5"]))
    _record(cli, adding, "--samples", "5")
    adding.write_text(adding.read_text("utf-8") + "min_pass_rate: 0.9\n", "utf-8")

    result = cli("run", adding, "--agents", "function_calling")

    assert result.code == 1
    assert "below min_pass_rate 90% beyond noise" in result.out
    assert "sample 0 failed" in result.out


def test_replay_reproduces_every_samples_recorded_trace(cli: Callable[..., Outcome],
                                                       adding: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(ANSWERS))
    _record(cli, adding, "--samples", "3")
    adding.write_text(adding.read_text("utf-8") + "min_pass_rate: 0.5\n", "utf-8")

    result = cli("replay", adding, "--agent", "function_calling")

    assert result.code == 0, result.out
    assert "replay reproduces the recorded traces of all 3 samples" in result.out


def test_record_samples_zero_is_a_usage_error(cli: Callable[..., Outcome], adding: Path) -> None:
    result = _record(cli, adding, "--samples", "0")

    assert result.code == 2
    assert "--samples: must be at least 1, got 0" in result.err


def test_record_samples_over_a_cassette_with_another_count_exits_2_and_keeps_it(
        cli: Callable[..., Outcome], adding: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(ANSWERS))
    _record(cli, adding, "--samples", "3")
    before = _cassette(adding)

    result = _record(cli, adding, "--samples", "5")

    assert result.code == 2
    assert "holds 3 samples, but 5 were asked; give --samples 3" in result.err
    assert _cassette(adding) == before


def test_the_rerecord_hint_of_a_sampled_recording_records_the_same_samples(
        cli: Callable[..., Outcome], adding: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(ANSWERS))
    _record(cli, adding, "--samples", "3", "--seed", "4")
    adding.write_text(adding.read_text("utf-8").replace("What is 2 + 3?", "What is 3 + 3?"),
                      "utf-8")

    result = cli("replay", adding, "--agent", "function_calling")

    assert result.code == 1
    assert "the recording no longer fits the agent" in result.out
    assert ("--mode rewrite --model gpt-4o-mini --base-url http://fake-openai.test/v1 "
            "--samples 3 --temperature 0.8 --seed 4") in result.out


def test_run_fails_a_case_none_of_whose_samples_fits_the_agent_any_more_saying_so(
        cli: Callable[..., Outcome], adding: Path, fake_openai_endpoint) -> None:
    fake_openai_endpoint(_script(["2 + 3 = 5"] * 3))
    _record(cli, adding, "--samples", "3")
    adding.write_text(adding.read_text("utf-8").replace("What is 2 + 3?", "What is 3 + 2?"),
                      "utf-8")

    result = cli("run", adding, "--agents", "function_calling")

    assert result.code == 1
    said = " ".join(result.out.split())
    assert ("FAIL adding[function_calling] 3 samples recorded: none replays to its end, so no "
            "pass rate") in said
    assert "sample 2: the recording no longer fits the agent" in said


def test_a_sampled_case_whose_recording_no_longer_fits_says_so_by_kind(
        cli: Callable[..., Outcome], adding: Path, fake_openai_endpoint) -> None:
    from agentkit.harness import Case, run_case
    from agentkit.scenario import load_scenario

    fake_openai_endpoint(_script(["2 + 3 = 5"] * 3))
    _record(cli, adding, "--samples", "3")
    adding.write_text(adding.read_text("utf-8").replace("What is 2 + 3?", "What is 3 + 2?"),
                      "utf-8")

    case = run_case(Case(load_scenario(adding), "function_calling"))

    assert case.sampled and not case.passed
    assert [problem.kind for problem in case.verdict.problems] == ["recording_mismatch"] * 3
