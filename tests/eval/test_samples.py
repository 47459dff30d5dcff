"""Samples: N live runs recorded into one cassette and judged together on every replay."""

from __future__ import annotations

import json

import pytest
import yaml

from agentkit.eval._samples import SamplesMismatchError, record_samples, run_samples
from agentkit.llms.cassette import Cassette, CassetteError, CassetteLLM
from agentkit.scenario.judge import SnapshotFiles

from .conftest import answering, sampled_scenario


def _record(path, *answers, mode="once"):
    return record_samples(path, "function_calling", answering(*answers), len(answers), mode,
                          sampling={"temperature": 0.8, "seed": 0})


def _cassette(path):
    return yaml.safe_load((path.parent / "cassettes" / "sam.yaml").read_text("utf-8"))


def test_samples_are_recorded_into_one_cassette_each_exchange_naming_its_sample(scenario_file):
    path = scenario_file()

    recording = _record(path, "2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5")

    assert recording.ok and recording.written
    data = _cassette(path)
    # format 3: samples (2) whose requests repeat messages, written as references (3)
    assert (data["format"], data["samples"], data["complete"]) == (3, 3, [0, 1, 2])
    assert data["sampling"] == {"temperature": 0.8, "seed": 0}
    assert [e["sample"] for e in data["exchanges"]] == [0, 0, 1, 1, 2, 2]


def test_the_snapshot_of_a_sampled_recording_holds_every_samples_trace(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 6")

    snapshot = json.loads((path.parent / "__snapshots__" / "sam" / "function_calling.json")
                          .read_text("utf-8"))

    assert [t["turns"][0]["response"] for t in snapshot["samples"]] == ["2 + 3 = 5", "2 + 3 = 6"]


def test_the_same_request_in_two_samples_replays_each_samples_own_answer(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 6")
    exchanges = _cassette(path)["exchanges"]
    assert exchanges[0]["request_hash"] == exchanges[2]["request_hash"]  # same request

    replay = run_samples(path, "function_calling")

    assert [r.result.trace.turns[0].response for r in replay.runs] == ["2 + 3 = 5", "2 + 3 = 6"]


def test_a_replay_judges_every_sample_and_computes_the_pass_rate(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5", "five")

    replay = run_samples(path, "function_calling")

    assert [r.outcome for r in replay.runs] == ["pass", "fail", "pass", "fail"]
    assert (replay.stats.passed, replay.stats.judged, replay.stats.case_class) == (2, 4, "flaky")


def test_without_min_pass_rate_a_failing_sample_fails_the_case(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 6")

    verdict = run_samples(path, "function_calling").verdict

    assert verdict.outcome == "fail"
    assert "1 of 2 samples failed" in verdict.problems[0]
    assert any("sample 1 failed" in p for p in verdict.problems)


def test_min_pass_rate_within_noise_passes_the_case(scenario_file):
    path = scenario_file(sampled_scenario(extra="min_pass_rate: 0.7\n"))
    _record(path, "2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5")

    assert run_samples(path, "function_calling").verdict.passed


@pytest.mark.slow  # an evaluation's many samples
def test_the_snapshot_of_all_samples_is_compared_as_one(scenario_file):
    path = scenario_file(sampled_scenario(extra="min_pass_rate: 0.1\n"))
    _record(path, "2 + 3 = 5", "2 + 3 = 6")

    same = run_samples(path, "function_calling", snapshots=SnapshotFiles("check"))
    assert (same.verdict.snapshot, same.verdict.passed) == ("same", True)

    snapshot = path.parent / "__snapshots__" / "sam" / "function_calling.json"
    stored = json.loads(snapshot.read_text("utf-8"))
    stored["samples"][1]["turns"][0]["response"] = "something else"
    snapshot.write_text(json.dumps(stored), "utf-8")
    changed = run_samples(path, "function_calling", snapshots=SnapshotFiles("check"))

    assert (changed.verdict.snapshot, changed.verdict.passed) == ("changed", False)
    assert "sample 1:" in changed.verdict.snapshot_diff


def test_once_with_a_cassette_of_another_sample_count_is_an_error_and_writes_nothing(
        scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 5")
    before = (path.parent / "cassettes" / "sam.yaml").read_text("utf-8")

    with pytest.raises(SamplesMismatchError, match="holds 2 samples, but 3 were asked"):
        _record(path, "a", "b", "c")

    assert (path.parent / "cassettes" / "sam.yaml").read_text("utf-8") == before


def test_once_with_a_single_run_cassette_and_samples_asked_is_an_error(scenario_file):
    path = scenario_file()
    cassettes = path.parent / "cassettes"
    cassettes.mkdir()
    Cassette(path=cassettes / "sam.yaml", model="scripted-live").save()

    with pytest.raises(SamplesMismatchError, match="holds one run"):
        _record(path, "2 + 3 = 5", "2 + 3 = 5")


def test_once_with_a_cassette_of_another_model_is_an_error(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5")
    cassette = path.parent / "cassettes" / "sam.yaml"
    cassette.write_text(cassette.read_text("utf-8").replace("model: scripted-live",
                                                            "model: other-model"), "utf-8")

    with pytest.raises(SamplesMismatchError, match="recorded with model `other-model`"):
        _record(path, "2 + 3 = 5")


def test_once_with_the_same_samples_recorded_asks_nothing_of_the_model(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 5")

    models = []
    again = record_samples(path, "function_calling",
                           lambda i: models.append(answering("x", "x")(i)) or models[-1], 2,
                           "once")

    assert again.existing and not again.written and again.replay.stats.passed == 2
    assert sum(model.calls for model in models) == 0


def test_a_sampled_cassette_replayed_without_a_sample_is_a_clear_error(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 5")

    with pytest.raises(CassetteError, match="holds 2 samples"):
        CassetteLLM(path.parent / "cassettes" / "sam.yaml")


def test_an_exchange_of_a_sample_that_does_not_exist_is_an_error_naming_the_line(
        scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 5")
    cassette = path.parent / "cassettes" / "sam.yaml"
    text = cassette.read_text("utf-8")
    cassette.write_text(text.replace("- sample: 1", "- sample: 7", 1), "utf-8")

    with pytest.raises(CassetteError, match=r"sam\.yaml:\d+: .*sample: 7 is not one of the 2"):
        Cassette.load(cassette)


def test_a_single_run_cassette_has_no_sample_keys_and_writes_back_unchanged(tmp_path):
    committed = (tmp_path / "c.yaml")
    source = (__import__("pathlib").Path(__file__).parents[2] / "scenarios" / "live"
              / "cassettes" / "live_function_calling.function_calling.yaml")
    text = source.read_text("utf-8")
    committed.write_text(text, "utf-8")

    cassette = Cassette.load(committed)
    if cassette.sampled:  # the bundled live recordings are sampled: make a single-run one
        cassette = Cassette(path=committed, model="m", exchanges=cassette.sample_exchanges(0))
        cassette.save()
        text = committed.read_text("utf-8")
        cassette = Cassette.load(committed)

    # format 3, not 2: its requests repeat messages (references), and it holds no samples
    assert (cassette.samples, yaml.safe_load(text)["format"]) == (None, 3)
    assert "sample:" not in text and "samples:" not in text
    assert cassette.dumps() == text


def test_a_sample_the_recording_no_longer_fits_fails_the_case_naming_it(scenario_file):
    path = scenario_file(sampled_scenario(extra="min_pass_rate: 0\n"))
    _record(path, "2 + 3 = 5", "2 + 3 = 5")
    path.write_text(path.read_text("utf-8").replace("What is 2 + 3?", "What is 2 + 4?"), "utf-8")

    verdict = run_samples(path, "function_calling").verdict

    assert verdict.outcome == "fail"
    assert "sample 0: the recording no longer fits the agent" in verdict.problems[0]


def test_a_sample_that_hit_a_rate_limit_is_counted_apart(scenario_file):
    path = scenario_file()
    _record(path, "2 + 3 = 5", "2 + 3 = 5", "2 + 3 = 5")
    file = path.parent / "cassettes" / "sam.yaml"
    data = yaml.safe_load(file.read_text("utf-8"))
    for exchange in data["exchanges"]:
        if exchange["sample"] == 2:
            exchange.pop("response")
            exchange["error"] = {"type": "RateLimitError", "message": "429 slow down",
                                 "status_code": 429}
    failing = next(e for e in data["exchanges"] if e["sample"] == 2)
    data["exchanges"] = [*(e for e in data["exchanges"] if e["sample"] != 2), failing]
    file.write_text(yaml.safe_dump(data), "utf-8")

    replay = run_samples(path, "function_calling")

    assert [r.outcome for r in replay.runs] == ["pass", "pass", "infra"]
    assert (replay.stats.pass_rate, replay.stats.infra_errors, replay.verdict.passed) == (
        1.0, 1, True)
