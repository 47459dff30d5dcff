"""Evaluation on live models: samples, statistics, the model × agent-type matrix.

* :mod:`agentkit.eval._stats` -- Wilson intervals, pass@k and pass^k, Fisher's exact test,
  the spread of a cost;
* :mod:`agentkit.eval._cases` -- a case judged on its samples (class, ``min_pass_rate``, the
  words for a change of pass rate);
* :mod:`agentkit.eval._samples` -- sampled cassettes: recording N runs, replaying and judging
  all of them;
* :mod:`agentkit.eval._run` -- an evaluation from start to end (plan, open the cassettes,
  check the models, record, judge), as ``agentkit eval`` runs it;
* :mod:`agentkit.eval._live` -- what live calls go through: adaptive concurrency (back off on
  429, grow on success), call and token budgets;
* :mod:`agentkit.eval._matrix` -- every scenario × agent type × model, recorded where a sample
  is missing, shards;
* :mod:`agentkit.eval.judge_injection` -- how far a judge's model resists answers that
  instruct it: the bundled adversarial set (``python -m agentkit.eval.judge_injection``).

The modules are private (``_``-prefixed); import the names below from :mod:`agentkit.eval`.
``stats`` and ``cases`` live in :mod:`agentkit.verdict`, which judges sampled cases by them;
these names re-export them. It sits between :mod:`agentkit.scenario` (which it runs) and
:mod:`agentkit.report` (which presents its statistics): the report imports it, never the
reverse.
"""

from agentkit.eval._cases import (
    CaseClass,
    CaseStats,
    GateWarning,
    PassRateChange,
    SampleOutcome,
    case_stats,
    compare_pass_rates,
    gate_warning,
    percent,
    samples_needed,
)
from agentkit.eval._compare import compare, dimension_of
from agentkit.eval._live import AdaptiveConcurrency, Budget, LiveModel, StoppedError
from agentkit.eval._matrix import CaseResult, Evaluation, parse_shard, plan, shard, shard_of
from agentkit.eval._models import canonical_models, parse_model
from agentkit.eval._progress import EvalProgress
from agentkit.eval._run import EvalRun, LiveSettings
from agentkit.eval._samples import (
    SamplesMismatchError,
    Seeded,
    record_samples,
    run_samples,
    sample_count,
)
from agentkit.eval._stats import DEFAULT_CONFIDENCE, fisher_lower, wilson_interval

__all__ = [
    "DEFAULT_CONFIDENCE",
    "AdaptiveConcurrency",
    "Budget",
    "CaseClass",
    "CaseResult",
    "CaseStats",
    "EvalProgress",
    "EvalRun",
    "Evaluation",
    "GateWarning",
    "LiveModel",
    "LiveSettings",
    "PassRateChange",
    "SampleOutcome",
    "SamplesMismatchError",
    "Seeded",
    "StoppedError",
    "canonical_models",
    "case_stats",
    "compare",
    "compare_pass_rates",
    "dimension_of",
    "fisher_lower",
    "gate_warning",
    "parse_model",
    "parse_shard",
    "percent",
    "plan",
    "record_samples",
    "run_samples",
    "sample_count",
    "samples_needed",
    "shard",
    "shard_of",
    "wilson_interval",
]
