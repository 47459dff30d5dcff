"""The evaluation matrix: planning, shards, recording what is missing, resuming, budgets and
infrastructure errors -- with scripted live models (one per sample, by seed)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from agentkit.core.errors import BadInputError
from agentkit.eval._live import AdaptiveConcurrency, Budget
from agentkit.eval._matrix import Evaluation, parse_shard, plan, shard, shard_of
from agentkit.eval._samples import SamplesMismatchError
from agentkit.llms.errors import APITimeoutError, RateLimitError, ServerError
from agentkit.llms.mock import FunctionLLM, tool_call
from tests.scenario_text import adding_scenario


def _scenario(name: str, agents: str = "function_calling") -> str:
    declared = "".join(f"  {agent}:\n    script: []\n" for agent in agents.split(","))
    return adding_scenario(name, 'expect:\n  answer: {contains: "5"}\n'
                                 f"agents:\n{declared}")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "one.yaml").write_text(_scenario("one"), "utf-8")
    (folder / "two.yaml").write_text(_scenario("two", "function_calling,react"), "utf-8")
    return folder


class Models:
    """A live model per sample that answers like a model, by the conversation: without a
    tool result it calls add(2, 3), with one it answers ``answers[seed]`` (raised, if it is an
    exception; a list is worked through, one item per answer asked). Every model made is
    kept, to count the calls."""

    def __init__(self, *answers: object) -> None:
        self.answers = answers
        self.made: list[FunctionLLM] = []
        self.lock = threading.Lock()

    def __call__(self, model: str, seed: int) -> FunctionLLM:
        answer = self.answers[seed % len(self.answers)]
        queue = list(answer) if isinstance(answer, list) else None

        def reply(messages, tools):
            if not any(m.role == "tool" for m in messages):
                return tool_call("add", a=2, b=3)
            if queue is None:
                return answer
            return queue.pop(0) if len(queue) > 1 else queue[0]

        llm = FunctionLLM(reply, name=model)
        with self.lock:
            self.made.append(llm)
        return llm

    @property
    def calls(self) -> int:
        return sum(len(llm.requests) for llm in self.made)


def _evaluation(suite: Path, live, samples: int = 3, **options) -> Evaluation:
    cases = plan([suite], ["function_calling"], ["m1"])
    evaluation = Evaluation(cases, samples, live, sampling={"temperature": 0.8, "seed": 0},
                            backoff=0.0, **options)
    evaluation.open()
    return evaluation


def test_the_plan_has_a_case_per_scenario_agent_type_and_model_the_scenario_declares(suite):
    cases = plan([suite], ["function_calling", "react"], ["m1", "m2"])

    assert [c.key for c in cases] == [
        "one[function_calling@m1]", "one[function_calling@m2]", "two[function_calling@m1]",
        "two[function_calling@m2]", "two[react@m1]", "two[react@m2]"]
    assert cases[0].cassette == suite / "cassettes" / "eval" / "one.function_calling.m1.yaml"


def test_an_unknown_agent_type_is_bad_input_naming_it(suite):
    with pytest.raises(BadInputError, match="unknown agent type `reactt`"):
        plan([suite], ["reactt"], ["m1"])


def test_a_matrix_without_any_case_is_bad_input(suite):
    with pytest.raises(BadInputError, match="declares the agent type"):
        plan([suite], ["coa"], ["m1"])


def test_shards_split_the_cases_each_into_exactly_one_shard():
    keys = [f"s{i}[react@m]" for i in range(50)]

    picked = [shard(keys, index, 4) for index in range(1, 5)]

    assert all(sum(column) == 1 for column in zip(*picked, strict=True))
    assert all(any(column) for column in picked)  # 50 keys reach all 4 shards


def test_a_case_keeps_its_shard_whatever_else_is_in_the_suite():
    assert shard_of("two[react@m1]", 3) == shard_of("two[react@m1]", 3)
    before = {k: shard_of(k, 3) for k in ("a[x@m]", "b[x@m]")}
    assert {k: shard_of(k, 3) for k in ("a[x@m]", "b[x@m]", "c[x@m]")} | before == \
        {k: shard_of(k, 3) for k in ("a[x@m]", "b[x@m]", "c[x@m]")}


@pytest.mark.parametrize("text", ["0/2", "3/2", "a/b", "2"])
def test_a_bad_shard_is_an_error_saying_the_form(text):
    with pytest.raises(ValueError, match=r"i/n|between 1 and"):
        parse_shard(text)


def test_an_evaluation_records_every_missing_sample_and_judges_the_cases(suite):
    models = Models("2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5")
    evaluation = _evaluation(suite, models)

    evaluation.record()
    results = {r.case.key: r.sampled for r in evaluation.results()}

    assert list(results) == ["one[function_calling@m1]", "two[function_calling@m1]"]
    stats = results["one[function_calling@m1]"].stats
    assert (stats.passed, stats.judged, stats.case_class) == (2, 3, "flaky")
    cassette = yaml.safe_load((suite / "cassettes" / "eval" / "one.function_calling.m1.yaml")
                              .read_text("utf-8"))
    assert (cassette["samples"], cassette["complete"], cassette["model"]) == (3, [0, 1, 2], "m1")
    assert models.calls == 2 * 3 * 2


def test_a_second_evaluation_with_everything_recorded_asks_the_model_nothing(suite):
    _evaluation(suite, Models("2 + 3 = 5")).record()
    models = Models("2 + 3 = 5")

    again = _evaluation(suite, models)
    again.record()

    assert (again.todo, models.calls, len(again.results())) == ([], 0, 2)


def test_offline_an_evaluation_with_samples_missing_is_bad_input_saying_how(suite):
    evaluation = _evaluation(suite, None)

    with pytest.raises(BadInputError, match=r"6 sample.* not recorded yet.*--base-url"):
        evaluation.record()


def test_a_spent_call_budget_stops_cleanly_and_the_next_run_resumes_without_asking_twice(suite):
    first_models = Models("2 + 3 = 5")
    first = _evaluation(suite, first_models, budget=Budget(max_calls=5), workers=1)

    first.record()

    assert first.budget.calls == 5 and first.budget.refused >= 1
    assert first.missing() and first.recorded == 2  # two samples of two calls, one half done
    rest_models = Models("2 + 3 = 5")
    rest = _evaluation(suite, rest_models)
    rest.record()
    assert rest.missing() == {}
    assert first_models.calls + rest_models.calls == 2 * 3 * 2  # not one call asked twice


def test_a_stop_mid_run_keeps_what_was_recorded_and_resumes_from_there(suite):
    models = Models("2 + 3 = 5")
    evaluation = _evaluation(suite, models, workers=1)
    original = evaluation._record

    def stop_after_first(case, index):
        original(case, index)
        evaluation.stop.set()

    evaluation._record = stop_after_first  # type: ignore[method-assign]
    evaluation.record()
    assert evaluation.recorded == 1

    again = Models("2 + 3 = 5")
    resumed = _evaluation(suite, again)
    resumed.record()
    assert resumed.recorded == 6 and models.calls + again.calls == 12


def test_a_sample_hitting_rate_limits_is_counted_apart_and_asked_again_next_time(suite):
    error = RateLimitError("429: slow down", retry_after=0.0)
    models = Models([error])
    evaluation = _evaluation(suite, models, samples=1, retries=2)

    evaluation.record()
    results = evaluation.results()

    stats = results[0].sampled.stats
    assert (stats.infra_errors, stats.judged, stats.case_class) == (1, 0, "infra_error")
    assert evaluation.limiter.rate_limits == 2 * 3  # two cases, each three attempts
    assert evaluation.missing() == {"one[function_calling@m1]": 1,
                                    "two[function_calling@m1]": 1}
    healthy = Models("2 + 3 = 5")
    again = _evaluation(suite, healthy, samples=1)
    again.record()
    assert again.missing() == {} and healthy.calls == 2  # the add call was kept: one call each


def test_a_call_timed_out_while_served_stops_the_evaluation_and_its_sample_resumes(suite):
    # the server had the request and may still be generating its answer (a one-slot local
    # server would make every later request wait behind it): the evaluation stops, says why,
    # and keeps the sample's earlier calls; the timeout is no verdict on the case
    served = APITimeoutError("the server did not answer within 900 s (1 attempt); not retried")
    served.retryable = False
    models = Models(served)
    evaluation = _evaluation(suite, models, samples=1, limiter=AdaptiveConcurrency(1))

    evaluation.record()

    assert evaluation.unreachable == str(served)
    assert models.calls == 2  # add(2, 3), then the answer that timed out; `two` never asked
    assert evaluation.infra == {} and evaluation.recorded == 0
    assert evaluation.missing() == {"one[function_calling@m1]": 1,
                                    "two[function_calling@m1]": 1}
    healthy = Models("2 + 3 = 5")
    again = _evaluation(suite, healthy, samples=1, limiter=AdaptiveConcurrency(1))
    again.record()
    assert again.missing() == {} and healthy.calls == 1 + 2  # `one`'s add call was kept
    assert [r.sampled.stats.passed for r in again.results()] == [1, 1]


def test_a_server_error_then_success_is_retried_and_not_an_infrastructure_error(suite):
    models = Models([ServerError("503", status_code=503), "2 + 3 = 5"])
    evaluation = _evaluation(suite, models, samples=1)

    evaluation.record()

    assert [r.sampled.stats.passed for r in evaluation.results()] == [1, 1]


def test_a_cassette_of_another_sample_count_is_an_error_before_anything_is_spent(suite):
    _evaluation(suite, Models("2 + 3 = 5"), samples=2).record()
    models = Models("2 + 3 = 5")

    with pytest.raises(SamplesMismatchError, match="holds 2 samples, but 3 were asked"):
        _evaluation(suite, models, samples=3)
    assert models.calls == 0


def test_a_cassette_of_another_model_is_an_error(suite):
    _evaluation(suite, Models("2 + 3 = 5")).record()
    cassette = suite / "cassettes" / "eval" / "one.function_calling.m1.yaml"
    cassette.write_text(cassette.read_text("utf-8").replace("model: m1", "model: m9"), "utf-8")

    with pytest.raises(SamplesMismatchError, match="recorded with model `m9`, not `m1`"):
        _evaluation(suite, Models("2 + 3 = 5"))


def _stopping_mid_answer(folder: Path, answer: object, *, react_iterations: int = 1) -> Evaluation:
    """An evaluation of one react sample whose model, as it answers, sees the evaluation stop
    (another sample spent the budget, or Ctrl-C): ``answer`` is what it answers."""
    (folder / "loop.yaml").write_text(adding_scenario(
        "loop", 'expect:\n  answer: {contains: "5"}\nagents:\n  react:\n'
                f"    params: {{max_iterations: {react_iterations}}}\n    script: []\n"), "utf-8")
    evaluation: Evaluation

    def live(model: str, seed: int) -> FunctionLLM:
        def reply(messages, tools):
            evaluation.stop.set()
            return answer
        return FunctionLLM(reply, name=model)

    evaluation = Evaluation(plan([folder], ["react"], ["m1"]), 1, live,
                            sampling={"temperature": 0.8, "seed": 0}, backoff=0.0)
    evaluation.open()
    return evaluation


def test_a_sample_ending_in_its_agents_own_error_as_the_evaluation_stops_is_kept(tmp_path):
    # the agent reaches its max iterations on the answer it was given before anything was
    # refused: that end is the sample's, recorded and judged, not cut short and asked again
    evaluation = _stopping_mid_answer(
        tmp_path, 'Thought: I need a tool.\nAction: add\nAction Input: {"a": 2, "b": 3}')

    evaluation.record()

    assert (evaluation.recorded, evaluation.missing(), evaluation.budget.refused) == (1, {}, 0)
    stats = evaluation.results()[0].sampled.stats
    assert (stats.judged, stats.passed, stats.infra_errors) == (1, 0, 0)


def test_a_sample_whose_next_call_is_refused_as_the_evaluation_stops_resumes(tmp_path):
    # with room for a second iteration the agent asks again, and the stopping evaluation
    # refuses the call: the sample is cut short by agentkit, kept for the next run
    evaluation = _stopping_mid_answer(
        tmp_path, 'Thought: I need a tool.\nAction: add\nAction Input: {"a": 2, "b": 3}',
        react_iterations=3)

    evaluation.record()

    assert (evaluation.recorded, evaluation.missing()) == (0, {"loop[react@m1]": 1})
    assert evaluation.infra == {}
