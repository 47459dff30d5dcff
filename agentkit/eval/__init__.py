"""Evaluation on live models: samples, statistics, the model × agent-type matrix.

* :mod:`agentkit.eval.stats` -- Wilson intervals, pass@k and pass^k, Fisher's exact test,
  the spread of a cost;
* :mod:`agentkit.eval.cases` -- a case judged on its samples (class, ``min_pass_rate``, the
  words for a change of pass rate);
* :mod:`agentkit.eval.samples` -- sampled cassettes: recording N runs, replaying and judging
  all of them;
* :mod:`agentkit.eval.run` -- an evaluation from start to end (plan, open the cassettes,
  check the models, record, judge), as ``agentkit eval`` runs it;
* :mod:`agentkit.eval.live` -- what live calls go through: adaptive concurrency (back off on
  429, grow on success), call and token budgets;
* :mod:`agentkit.eval.matrix` -- every scenario × agent type × model, recorded where a sample
  is missing, shards;
* :mod:`agentkit.eval.judge_injection` -- how far a judge's model resists answers that
  instruct it: the bundled adversarial set (``python -m agentkit.eval.judge_injection``).

``stats`` and ``cases`` live in :mod:`agentkit.verdict`, which judges sampled cases by them;
these names re-export them. It sits between :mod:`agentkit.scenario` (which it runs) and
:mod:`agentkit.report` (which presents its statistics): the report imports it, never the
reverse.
"""
