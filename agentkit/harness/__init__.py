"""Running: the agent-type registry and its families, planning (the checks of a scenario that
need the registry, the tools' code, MCP servers or recorded runs), the tool world, the
scenario runner (which returns a run and judges nothing), the roles (LLM judges, simulated
users), recording and resuming runs, and the case runner (one run, or the N samples of a
sampled recording, judged once). The modules are private; these are the names to import."""

from agentkit.harness._agent_types import (
    AGENT_TYPES,
    ENTRY_POINT_GROUP,
    AgentContext,
    AgentFactory,
    AgentType,
    AgentTypeError,
    ChatAgent,
    UnknownAgentTypeError,
    UnknownTrajectoryFormatError,
    agent_type_names,
    build_agent,
    check_agent_type,
    named_renderer,
    register_agent_type,
    renderable_agent_types,
    resolve_agent_type,
    trajectory_renderer,
    trajectory_renderer_for,
)
from agentkit.harness._case import (
    Case,
    CaseResult,
    RunObserver,
    observing_runs,
    run_case,
    sample_count,
)
from agentkit.harness._families.workflow import HumanInputEvent, file_human
from agentkit.harness._faults import (
    FaultNotApplicableError,
    InjectedFault,
    applicable_kinds,
    facts,
)
from agentkit.harness._llm_judge import (
    CONSISTENT_SCORE,
    JUDGE_PROMPT,
    Judge,
    JudgeAnswerError,
    Judgement,
    JudgeVerdictEvent,
    Subject,
    Vote,
    disagreements,
    judge_messages,
    judged_entries,
    parse_verdict,
    verdicts,
    vote,
)
from agentkit.harness._mcp import (
    MCPWorld,
    close_session_servers,
    mcp_cassette,
    mcp_problems,
    mcp_servers,
    open_mcp,
    server_of,
)
from agentkit.harness._plan import (
    load,
    not_a_workflow,
    plan_scenario,
    recorded_steps,
)
from agentkit.harness._project import (
    activated,
)
from agentkit.harness._record import (
    Recording,
    cassette_miss,
    record_scenario,
    rerecord_command,
    with_limits,
)
from agentkit.harness._resume import (
    check_resume,
    resume_agent,
)
from agentkit.harness._roles import (
    Channel,
    RoleAnswer,
    RoleEvent,
    RoleModels,
    RoleSource,
    TranscriptTurn,
    role_events,
    transcript,
)
from agentkit.harness._runner import (
    RunChange,
    ScenarioResult,
    execute_scenario,
    run_all,
    run_scenario,
)
from agentkit.harness._simulated_user import (
    FIRST_MESSAGE,
    USER_PROMPT,
    Conversation,
    ConversationEndEvent,
    EmptyMessageError,
    FixedTurns,
    SimulatedConversation,
    SimulatedTurnEvent,
    SimulatedUserContext,
    user_messages,
)
from agentkit.harness._state import RunWorld, StateCheck, open_world, state_checks
from agentkit.harness._variants import (
    FaultMatrix,
    FaultRecording,
    FaultVariant,
    NoFaultsError,
    fault_variants,
    offline_agent_types,
    record_fault_continuations,
    run_fault_matrix,
    variant_scenario,
)
from agentkit.harness._world import (
    NO_WORLD,
    WORLD_PARAMETER,
    CallPaused,
    SimulatedTool,
    SimulatedToolError,
    build_tool,
    build_tools,
    built_tools,
    resolve_ref,
)

__all__ = ["activated", "agent_type_names", "AGENT_TYPES", "AgentContext", "AgentFactory",
           "AgentType", "AgentTypeError", "build_agent", "build_tool", "build_tools",
           "built_tools", "CallPaused", "Case", "CaseResult", "cassette_miss", "Channel", "ChatAgent",
           "check_agent_type", "check_resume", "close_session_servers", "Conversation",
           "ConversationEndEvent", "disagreements", "EmptyMessageError", "ENTRY_POINT_GROUP",
           "execute_scenario", "applicable_kinds", "facts", "file_human", "FaultMatrix", "FaultRecording",
           "record_fault_continuations",
           "FaultNotApplicableError", "FaultVariant", "fault_variants", "NoFaultsError",
           "offline_agent_types", "run_fault_matrix", "variant_scenario",
           "FIRST_MESSAGE", "HumanInputEvent", "InjectedFault", "FixedTurns", "Judge", "judge_messages",
           "JUDGE_PROMPT", "JudgeAnswerError", "judged_entries", "Judgement",
           "JudgeVerdictEvent", "load", "mcp_cassette", "mcp_problems", "mcp_servers",
           "MCPWorld", "named_renderer", "not_a_workflow", "observing_runs", "open_mcp",
           "parse_verdict", "plan_scenario", "record_scenario", "recorded_steps", "Recording", "with_limits",
           "register_agent_type", "renderable_agent_types", "rerecord_command",
           "resolve_agent_type", "resolve_ref", "RunChange", "resume_agent", "role_events", "RoleAnswer",
           "RoleEvent", "RoleModels", "RoleSource", "run_all", "run_case", "run_scenario",
           "RunObserver", "sample_count", "ScenarioResult", "server_of",
           "SimulatedConversation", "SimulatedTool", "SimulatedToolError", "SimulatedTurnEvent",
           "SimulatedUserContext", "Subject", "trajectory_renderer", "trajectory_renderer_for",
           "transcript", "TranscriptTurn", "UnknownAgentTypeError", "UnknownTrajectoryFormatError",
           "user_messages", "USER_PROMPT", "verdicts", "vote", "Vote", "CONSISTENT_SCORE",
           "NO_WORLD", "WORLD_PARAMETER", "RunWorld", "StateCheck", "open_world", "state_checks"]
