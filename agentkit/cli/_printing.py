"""What the commands print of a run, a sampled case and a comparison: the result line, the
verdict's lines, the disagreements between samples, the standings."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TextIO

from agentkit.core import fmt

__all__ = ["result_line", "print_verdict", "record_hint", "sampled_line", "print_sampled",
           "print_sample_disagreements", "print_disagreements", "print_summaries", "junit_report"]


def result_line(name: str, result: Any, verdict: Any) -> str:
    """``PASS  scenario[agent]  steps=...`` (``FAIL``/``ERROR``; no numbers without a trace),
    with the calls and tokens of the harness's own roles (judges, a simulated user) apart,
    then one line per judged expectation: its verdict and the judge's reason."""
    status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[verdict.outcome]
    if result is None:
        return f"{status}  {name}"
    totals = result.trace.totals()
    roles = "".join(f" {role}={sums['llm_calls']}:{sums['prompt_tokens']}+"
                    f"{sums['completion_tokens']}" for role, sums in totals.roles.items())
    judged = "".join(f"\n      judged {j.at}: {j.verdict}"
                     f"{f' ({j.tally()})' if j.tally() else ''} -- {j.reason}"
                     + _uncalibrated(j, result.scenario.path) for j in result.judgements)
    return (f"{status}  {name:<45} steps={totals.steps} llm={totals.llm_calls} "
            f"tools={totals.tool_calls} tokens={totals.prompt_tokens}+{totals.completion_tokens} "
            f"wall={fmt.seconds(totals.wall_time)} serial={fmt.seconds(totals.serial_time)}"
            f"{roles}{judged}")


def _uncalibrated(judgement: Any, scenario_path: str | None) -> str:
    """The line under a judged expectation's verdict when its judge is not calibrated
    against people (:func:`agentkit.quality.calibration_of`); nothing when it is."""
    from agentkit.quality import calibration_of

    found = calibration_of(judgement, scenario_path)
    return "" if found.calibrated else f"\n        judge {found.why}"


def print_verdict(verdict: Any, out: TextIO, hint: str | None = None,
                  verbose: bool = False) -> None:
    """The verdict's lines (``verbose``: with the user's tracebacks behind them), then
    ``hint``."""
    for line in verdict.lines(verbose):
        print("      " + line.replace("\n", "\n      "), file=out)
    if verdict.cause is not None:
        print(f"      {verdict.cause.line()}", file=out)
    if hint is not None:
        print(f"      {hint}", file=out)


def record_hint(scenario: Any, agent_type: str, verdict: Any) -> str | None:
    """How to record a missing cassette, for a run that could not start without one."""
    from agentkit.scenario._layout import recording_files, records

    if (verdict.outcome == "error" and records(scenario, agent_type)
            and not all(p.exists() for p in recording_files(scenario, agent_type)[1:])):
        return f"fix: record it with `agentkit record {scenario.path} --agent {agent_type}`"
    return None


def sampled_line(name: str, sampled: Any) -> str:
    """``PASS  scenario[agent]  5 samples: pass rate 80% (4/5, ...) · flaky`` (and a warning
    line when its ``min_pass_rate`` cannot fail at that many samples)."""
    status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[sampled.verdict.outcome]
    stats = sampled.stats
    counts = f"{stats.samples} samples"
    if stats.infra_errors:
        counts += f" ({stats.infra_errors} infrastructure errors, not counted)"
    missing = f", {len(sampled.missing)} not recorded" if sampled.missing else ""
    if not stats.samples and sampled.runs:
        return (f"{status}  {name:<45} {len(sampled.runs)} samples recorded{missing}: none "
                "replays to its end, so no pass rate")
    warning = sampled.gate_warning  # what the pytest plugin warns, defined once
    return (f"{status}  {name:<45} {counts}{missing}: pass rate {stats.describe()} · "
            f"{stats.case_class}" + (f"\n      warning: {warning}" if warning else ""))


def print_sampled(name: str, sampled: Any, out: TextIO) -> None:
    print(sampled_line(name, sampled), file=out)
    if not sampled.passed:
        print_verdict(sampled.verdict, out)
    print_sample_disagreements(sampled, out)


def print_sample_disagreements(sampled: Any, out: TextIO) -> None:
    """The judges disagreeing between the samples of a case, in the lines the pytest plugin
    prints too (:func:`agentkit.report.disagreement_lines`)."""
    from agentkit.report import disagreement_lines

    for line in disagreement_lines(sampled):
        print(f"      {line}", file=out)


def print_disagreements(found: Sequence[Any], out: TextIO) -> None:
    """Each judged expectation whose verdict differs between the samples of a case, with
    every sample's verdict and reason."""
    from agentkit.core.secrets import Redactor

    for disagreement in found:
        for line in disagreement.lines(Redactor().text):
            print(f"      {line}", file=out)


def print_summaries(comparison: Any, out: TextIO) -> None:
    """The verdict in one sentence, then one line per compared agent type (× model): passed
    runs over the shared scenarios."""
    from agentkit.report import contender_label, verdict_sentence

    print(f"verdict: {verdict_sentence(comparison)}", file=out)
    compared = comparison.compared()
    for summary in comparison.summaries():
        rate = (f", pass rate {summary.passes}/{summary.judged}" if summary.judged
                and summary.judged != summary.runs else "")
        print(f"{contender_label(summary.contender):<20} {summary.passed}/{summary.runs} passed"
              f"{rate}", file=out)
    if compared.scenarios and len(compared.scenarios) < len(comparison.scenarios):
        shared = len(compared.scenarios)
        print(f"(those totals are over the {shared} scenario{'s' if shared != 1 else ''} every "
              "compared agent type ran)", file=out)
    for (agent_type, model), reason in compared.left_out:
        name = agent_type if model is None else f"{agent_type} @ {model}"
        print(f"{name} is left out of the comparison: it {reason}", file=out)


def junit_report(args: argparse.Namespace, comparison: Any, regressions: list[Any],
                 out: TextIO) -> None:
    if not args.junit_xml:
        return
    from agentkit.report import junit_cases, write_junit

    reasons = {delta.key: delta.reasons for delta in regressions}
    print(f"wrote {write_junit(args.junit_xml, junit_cases(comparison, reasons))}", file=out)
