"""Judging, pure: each expectation a check returning problems with a kind, the one verdict
of a run (or of a sampled case), and the snapshot store of a session."""

from agentkit.verdict._attribution import CAUSES, Attribution, Cause, attribute
from agentkit.verdict._cases import (
    SAMPLES_LIMIT,
    CaseStats,
    SampleOutcome,
    case_stats,
    samples_to_fail_gate,
    samples_to_separate,
)
from agentkit.verdict._checks import (
    CHECKS,
    Check,
    Conversation,
    Expectations,
    Leftovers,
    RecordingPrefix,
    ToolAccounting,
    Trajectory,
    run_checks,
)
from agentkit.verdict._expectations import (
    ExpectationResult,
    check_expectations,
    expectation_results,
)
from agentkit.verdict._judgements import Judgement, Vote
from agentkit.verdict._outcomes import FaultOutcome, classify, injected_faults
from agentkit.verdict._problems import PROBLEM_KINDS, Problem, ProblemKind
from agentkit.verdict._rules import rule_calls
from agentkit.verdict._run import Run, ServerLeftovers
from agentkit.verdict._snapshots import (
    Compared,
    SnapshotFiles,
    SnapshotPolicy,
    SnapshotSession,
    SnapshotState,
)
from agentkit.verdict._stats import cohen_kappa, kappa_interval
from agentkit.verdict._verdict import (
    COST_KEYS,
    Outcome,
    SampleRun,
    Verdict,
    cassette_miss,
    judge,
    judge_error,
    judge_fault,
    judge_samples,
    sample_outcome,
    unjudged,
)

__all__ = ["CAUSES", "Attribution", "Cause", "attribute",
           "COST_KEYS", "SAMPLES_LIMIT", "CHECKS", "CaseStats", "SampleOutcome", "case_stats", "Check",
           "Compared", "Conversation", "ExpectationResult",
           "Expectations", "FaultOutcome", "classify", "injected_faults", "judge_fault",
           "Judgement", "Leftovers", "Run", "ServerLeftovers", "Vote",
           "check_expectations", "expectation_results", "cohen_kappa", "kappa_interval",
           "Outcome", "PROBLEM_KINDS", "Problem", "ProblemKind", "RecordingPrefix", "SampleRun",
           "SnapshotFiles", "SnapshotPolicy", "SnapshotSession", "SnapshotState",
           "ToolAccounting", "Trajectory", "Verdict", "cassette_miss", "judge", "judge_error",
           "judge_samples", "rule_calls", "run_checks", "sample_outcome", "samples_to_fail_gate",
           "samples_to_separate", "unjudged"]
