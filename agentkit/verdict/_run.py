"""What the verdict judges: a run as the scenario runner leaves it
(:class:`agentkit.harness.ScenarioResult` is one), described by what the checks read and what
judging writes (its problems and its verdict)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agentkit.llms.base import LLM
    from agentkit.llms.doubles import ModelDouble
    from agentkit.llms.mock import ScriptedLLM
    from agentkit.scenario._model import Scenario
    from agentkit.scenario._trajectory import Trajectory
    from agentkit.tools import BaseTool
    from agentkit.trace import Trace
    from agentkit.verdict._judgements import Judgement
    from agentkit.verdict._problems import Problem
    from agentkit.verdict._verdict import Verdict

__all__ = ["Run", "ServerLeftovers"]


class ServerLeftovers(Protocol):
    """The run's MCP servers: what of their recorded exchanges the run did not use."""

    def leftovers(self) -> list[str]: ...


class Run(Protocol):
    """One run of a scenario under one agent type, to be judged."""

    problems: list[Problem]
    verdict: Verdict

    @property
    def scenario(self) -> Scenario: ...

    @property
    def agent_type(self) -> str: ...

    @property
    def trace(self) -> Trace: ...

    @property
    def judgements(self) -> Sequence[Judgement]: ...

    @property
    def models(self) -> Mapping[str | None, LLM]: ...

    @property
    def doubles(self) -> Sequence[ModelDouble]:
        """The test doubles behind the models (asked for their leftovers)."""
        ...

    @property
    def role_scripts(self) -> Mapping[str, ScriptedLLM]: ...

    @property
    def tools(self) -> Sequence[BaseTool]: ...

    @property
    def mcp(self) -> ServerLeftovers | None: ...

    @property
    def trajectory(self) -> Trajectory | None: ...

    @property
    def conversation_problems(self) -> Sequence[str]: ...

    @property
    def own_tools_allowed(self) -> bool: ...

    @property
    def stopped_by(self) -> str | None: ...

    @property
    def state_checks(self) -> Mapping[str, Callable[[Any], Any]]: ...

    @property
    def model_faults(self) -> Sequence[Any]:
        """The faults of the agent's models that happened
        (:class:`~agentkit.verdict._outcomes.Injected` each)."""
        ...
