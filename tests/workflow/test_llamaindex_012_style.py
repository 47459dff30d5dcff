"""Done-when of the workflow-fidelity issue: LlamaIndex 0.12-style workflow code (the module
``llamaindex_012_style``, unchanged but for its imports) runs on agentkit.workflow."""

from agentkit.core.sim import now, run_sync
from agentkit.llms.mock import ScriptedLLM

from . import llamaindex_012_style as upstream_style

SCRIPT = ["Why did the pirate buy an eyepatch? Budget cuts.", "Solid pun.", "A fine pun."]


def test_a_custom_workflow_with_ctx_get_set_and_a_retried_step_runs():
    llm = ScriptedLLM(list(SCRIPT))
    assert run_sync(upstream_style.run_once(llm)) == "[pirates] A fine pun. (3 LLM calls)"


def test_the_retry_waits_its_ten_seconds_on_the_virtual_clock():
    run_sync(upstream_style.run_once(ScriptedLLM(list(SCRIPT))))
    assert now() == 10.0


def test_a_stepwise_driver_loop_runs_the_workflow_step_by_step():
    result, delivered = run_sync(upstream_style.run_stepwise(ScriptedLLM(list(SCRIPT))))
    assert (result, delivered) == ("[pirates] A fine pun. (3 LLM calls)",
                                   ["TopicEvent", "JokeEvent", "CritiqueEvent", "StopEvent"])


def test_a_checkpointed_run_resumes_from_its_third_step_with_another_llm():
    llm, other = ScriptedLLM(list(SCRIPT)), ScriptedLLM(["Another summary."])
    first, second, steps = run_sync(upstream_style.run_checkpointed_then_resume(llm, other))
    assert (first, second, steps, len(llm.requests), len(other.requests)) == (
        "[pirates] A fine pun. (3 LLM calls)", "[pirates] Another summary. (3 LLM calls)",
        ["setup", "generate_joke", "critique_joke", "summarize"], 3, 1)
