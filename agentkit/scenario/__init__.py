"""The scenario file format (its modules are private, ``_``-prefixed; this face exports what
users import): the model, loading (parsing and located errors), the project's
settings, the file layout, trajectories, images and scripts -- no agent-type registry, MCP
server or recorded run is consulted while loading (planning does that:
:func:`agentkit.harness.plan_scenario`).

This package is also a compatibility face: the running side (the agent-type registry, the
scenario runner) moved to :mod:`agentkit.harness` and traces to :mod:`agentkit.trace`, and
the names users import from here -- ``register_agent_type``, ``AgentType``, ``AgentContext``,
``run_scenario``... -- stay importable. They are looked up when first asked for, then kept
(:func:`agentkit.core.lazy.lazy_names`), so importing the file format never imports the
harness, which is built on it."""

from typing import TYPE_CHECKING

from agentkit.core.lazy import lazy_names
from agentkit.scenario._faults import (
    DEFAULT_SAFE,
    FAULT_CLASSES,
    FAULT_KINDS,
    MODEL_FAULT_KINDS,
    OUTCOME_CLASSES,
    Fault,
    FaultClass,
    FaultJudges,
    FaultKind,
    FaultPlan,
    ModelFault,
    OutcomeClass,
    SafeAnswer,
)
from agentkit.scenario._layout import cassette_path, records
from agentkit.scenario._loader import ScenarioError, discover_scenarios, load_scenario
from agentkit.scenario._model import ErrorItem, Expect, Judged, Scenario, ScriptReply, ToolSpec, Turn
from agentkit.scenario._script import error_for
from agentkit.scenario._trajectory import (
    RenderContext,
    Trajectory,
    TrajectoryError,
    TrajectoryRenderer,
    TrajectoryStep,
    compile_trajectory,
)

if TYPE_CHECKING:
    from agentkit.harness import (
        AGENT_TYPES,
        AgentContext,
        AgentType,
        ScenarioResult,
        register_agent_type,
        run_all,
        run_scenario,
    )
    from agentkit.trace import Trace

__all__ = [
    "AGENT_TYPES",
    "AgentContext",
    "AgentType",
    "DEFAULT_SAFE",
    "ErrorItem",
    "Expect",
    "Judged",
    "FAULT_CLASSES",
    "FAULT_KINDS",
    "MODEL_FAULT_KINDS",
    "Fault",
    "FaultClass",
    "FaultJudges",
    "FaultKind",
    "FaultPlan",
    "ModelFault",
    "OUTCOME_CLASSES",
    "OutcomeClass",
    "RenderContext",
    "SafeAnswer",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "ScriptReply",
    "ToolSpec",
    "Trace",
    "Trajectory",
    "TrajectoryError",
    "TrajectoryRenderer",
    "TrajectoryStep",
    "Turn",
    "cassette_path",
    "compile_trajectory",
    "discover_scenarios",
    "error_for",
    "load_scenario",
    "records",
    "register_agent_type",
    "run_all",
    "run_scenario",
]

_MOVED = {
    "AGENT_TYPES": "agentkit.harness",
    "AgentContext": "agentkit.harness",
    "AgentType": "agentkit.harness",
    "register_agent_type": "agentkit.harness",
    "ScenarioResult": "agentkit.harness",
    "run_all": "agentkit.harness",
    "run_scenario": "agentkit.harness",
    "Trace": "agentkit.trace",
}
"""The names this package still answers for, by the package that now holds each."""

__getattr__, __dir__ = lazy_names(__name__, _MOVED)
