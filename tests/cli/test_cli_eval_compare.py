"""``agentkit eval --compare A B``: a paired verdict of two models (or agent types) on the same
cases and seeds, a flip table, non-inferiority with ``--margin``, and ``--until-decided``
drawing samples only while a case is undecided -- recorded, then replayed offline to the same
verdict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.llms.mock import tool_call
from cli_helpers import FAKE_URL, Outcome
from tests.scenario_text import adding_scenario


def _scenario(name: str) -> str:
    return adding_scenario(name, """\
expect:
  answer: {contains: "5"}
min_pass_rate: 0.1
agents:
  function_calling:
    script: []
""")


def _samples(*answers: str) -> list[object]:
    return [item for answer in answers for item in (tool_call("add", a=2, b=3), answer)]


def _eval(cli: Callable[..., Outcome], suite: Path, samples: int, *options: str | Path
          ) -> Outcome:
    return cli("eval", suite, "--agents", "function_calling", "--models", "m1,m2",
               "--samples", str(samples), "--concurrency", "1", "--max-concurrency", "1",
               "--out", suite.parent / "report", "--compare", "m1", "m2", *options)


@pytest.mark.slow  # a whole paired evaluation of two models
def test_a_paired_comparison_of_two_models_gives_a_verdict_and_a_flip_table(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint) -> None:
    write("scenarios/one.yaml", _scenario("one"))
    suite = write("scenarios/two.yaml", _scenario("two")).parent
    # case by case, sample by sample: m1 always right, m2 always wrong
    right, wrong = ["2 + 3 = 5"] * 4, ["2 + 3 = 6"] * 4
    fake_openai_endpoint(_samples(*right, *wrong, *right, *wrong))

    result = _eval(cli, suite, 4, "--base-url", FAKE_URL, "--margin", "10")

    assert "paired comparison by model: A = m1, B = m2" in result.out, result.out + result.err
    assert "one[function_calling]" in result.out and "two[function_calling]" in result.out
    assert "flips by scenario (A pass -> B fail / A fail -> B pass): one 4/0, two 4/0" \
        in result.out
    assert ("verdict: m2 is worse than m1: B - A = -100 points (95% interval -100 to -100, "
            "paired bootstrap over 2 scenarios, 8 pairs); m2 is not shown to be within 10 "
            "points of m1") in result.out
    paired = (suite.parent / "report" / "paired.md").read_text("utf-8")
    assert "m2 is worse than m1" in paired and "one 4/0" in paired


@pytest.mark.slow  # rounds of a whole evaluation
def test_until_decided_stops_a_clear_difference_before_its_cap_and_replays_offline(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint) -> None:
    suite = write("scenarios/one.yaml", _scenario("one")).parent
    right, wrong = ["2 + 3 = 5"] * 5, ["2 + 3 = 6"] * 5
    # round 1: 5 samples each (e-value 5.3, under 1/0.05); round 2: 5 more (e-value 93: decided)
    server = fake_openai_endpoint(_samples(*right, *wrong, *right, *wrong))

    live = _eval(cli, suite, 5, "--base-url", FAKE_URL, "--until-decided",
                 "--max-samples", "40")

    assert server.calls == 40  # 10 samples of each model, 2 calls each; not 40 samples
    assert "one[function_calling]                       10" in live.out, live.out + live.err
    assert "differs (m1 passes more)" in live.out
    verdict = next(line for line in live.out.splitlines() if line.startswith("verdict:"))

    offline = _eval(cli, suite, 5, "--until-decided", "--max-samples", "40")

    assert offline.code == live.code, offline.out + offline.err
    assert verdict in offline.out.splitlines()
    assert "0 to record" in offline.out


def test_compare_needs_two_names_of_the_same_dimension(cli: Callable[..., Outcome],
                                                       write: Callable[[str, str], Path]
                                                       ) -> None:
    suite = write("scenarios/one.yaml", _scenario("one")).parent

    result = cli("eval", suite, "--agents", "function_calling", "--models", "m1,m2",
                 "--samples", "2", "--out", suite.parent / "report",
                 "--compare", "m1", "function_calling")

    assert result.code == 2
    assert ("--compare m1 function_calling: name two agent types of --agents "
            "(function_calling) or two models of --models (m1, m2)") in result.err


def test_the_sequential_and_margin_options_need_compare(cli: Callable[..., Outcome],
                                                        write: Callable[[str, str], Path]
                                                        ) -> None:
    suite = write("scenarios/one.yaml", _scenario("one")).parent
    base = ("eval", suite, "--agents", "function_calling", "--models", "m1", "--samples", "2",
            "--out", suite.parent / "report")

    assert "--margin needs --compare A B" in cli(*base, "--margin", "5").err
    assert "--until-decided needs --compare A B" in cli(*base, "--until-decided").err
    margin = cli(*base, "--compare", "m1", "m2", "--margin", "150")
    assert margin.code == 2 and "150 is not between 0 and 100 (points)" in margin.err


def test_one_model_at_two_temperatures_is_two_models_each_sampled_at_its_own_and_paired(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint) -> None:
    suite = write("scenarios/one.yaml", _scenario("one")).parent
    server = fake_openai_endpoint(_samples(*["2 + 3 = 5"] * 3, *["2 + 3 = 6"] * 3))
    models = ("m1@temperature=0", "m1@temperature=0.8")

    live = cli("eval", suite, "--agents", "function_calling", "--models", ",".join(models),
               "--samples", "3", "--concurrency", "1", "--max-concurrency", "1", "--out",
               suite.parent / "report", "--compare", *models, "--base-url", FAKE_URL,
               "--seed", "4")

    assert [(r["model"], r["temperature"], r["seed"]) for r in server.requests][::2] == [
        ("m1", 0, 4), ("m1", 0, 5), ("m1", 0, 6), ("m1", 0.8, 4), ("m1", 0.8, 5), ("m1", 0.8, 6)]
    assert "(temperature 0, 0.8 by model, sample i with seed 4 + i" in live.out
    assert ("paired comparison by model: A = m1@temperature=0, B = m1@temperature=0.8"
            in live.out), live.out + live.err
    assert "flips by scenario (A pass -> B fail / A fail -> B pass): one 3/0" in live.out
    cassettes = sorted(p.name for p in (suite / "cassettes" / "eval").iterdir())
    assert len(cassettes) == 2 and all("temperature" in name for name in cassettes)

    offline = cli("eval", suite, "--agents", "function_calling", "--models",
                  "m1@temperature=0.0,m1@temperature=0.80", "--samples", "3", "--out",
                  suite.parent / "report", "--compare", "m1@temperature=0.0",
                  "m1@temperature=0.80")

    verdict = next(line for line in live.out.splitlines() if line.startswith("verdict:"))
    assert offline.code == live.code and verdict in offline.out.splitlines(), offline.out
    assert "0 to record" in offline.out


@pytest.mark.parametrize(("models", "compare", "message"), [
    ("m1@temperature=0.5,m1@temperature=0.50", ("m1@temperature=0.5", "m1@temperature=0.50"),
     "--models: m1@temperature=0.5 is listed as 'm1@temperature=0.5' and "
     "'m1@temperature=0.50'; list each model once"),
    ("m1@temperature=0.5,m2", ("m1@temperature=0.5", "m1@temperature=.5"),
     "--compare m1@temperature=0.5 m1@temperature=.5: both name the model "
     "m1@temperature=0.5; name two different ones"),
    ("m1@temp=0.5,m2", ("m1", "m2"), "--models: 'm1@temp=0.5': unknown model setting 'temp'; "
                                     "a model carries temperature (NAME@temperature=T)"),
    ("m1@temperature=3,m2", ("m1", "m2"), "--models: 'm1@temperature=3': temperature must be "
                                          "a number from 0 to 2, got '3'"),
    ("org/m1,org-m1", ("org/m1", "org-m1"),
     "--models: org/m1 and org-m1 would share cassette files (both are 'org-m1' in a file "
     "name); evaluate them in two runs with their own --cassettes folders"),
    ("m1@temperature=0,m1-temperature-0", ("m1@temperature=0", "m1-temperature-0"),
     "--models: m1@temperature=0 and m1-temperature-0 would share cassette files"),
])
def test_a_model_spec_that_is_malformed_or_names_a_model_twice_is_refused(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], models: str,
        compare: tuple[str, str], message: str) -> None:
    suite = write("scenarios/one.yaml", _scenario("one")).parent

    result = cli("eval", suite, "--agents", "function_calling", "--models", models,
                 "--samples", "2", "--out", suite.parent / "report", "--compare", *compare)

    assert result.code == 2
    assert message in result.err, result.err
