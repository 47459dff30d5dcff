"""``agentkit eval``: agent types × models on N live samples each (the evaluation is
:class:`agentkit.eval.EvalRun`'s), its report and the exit code."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from typing import Any, TextIO

from agentkit._console import EXIT_INTERRUPTED
from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_INCOMPLETE,
    EXIT_OK,
    CLIError,
    scenario_paths,
    tell,
    writable_folder,
)
from agentkit.cli._otel import otel_export
from agentkit.cli._printing import junit_report, print_disagreements, print_summaries

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.eval import EvalProgress
    from agentkit.report import (
        ReportError,
        compare_to_baseline,
        eval_comparison,
        load_comparison,
        write_report,
    )

    _check_options(args)
    progress = EvalProgress(sys.stderr)
    try:
        baseline = load_comparison(args.baseline) if args.baseline else None
        dimension = _dimension(args)
        # --until-decided: cassettes grow round by round, and a replay reads what they hold
        run = _open(args, progress, targets={} if args.until_decided else None)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    paired = None
    while True:
        try:
            _record(args, run, progress, out)
        except KeyboardInterrupt:
            evaluation = run.evaluation
            # the pipe a `| tee` read may be gone (Ctrl-C ended it too): best effort
            tell(f"agentkit: interrupted: {evaluation.recorded} of {evaluation.total} samples "
                 f"recorded and kept ({evaluation.calls_kept} calls in the cassettes); run the "
                 "same command again to record the rest (no recorded call is asked again)")
            return EXIT_INTERRUPTED
        try:
            with otel_export(args, out) if not args.until_decided else nullcontext():
                outcome = run.finish()  # every sample, as it is judged offline
        except BadInputError as exc:
            raise CLIError(str(exc)) from None
        if dimension is not None:
            paired = _paired(args, outcome, dimension)
        targets = _next_round(args, run, outcome, paired)
        if targets is None:
            break
        try:
            run = _open(args, progress, targets=targets, budget=run.evaluation.budget)
        except BadInputError as exc:
            raise CLIError(str(exc)) from None
    if args.until_decided and (args.otel_out is not None or args.otlp_endpoint):
        with otel_export(args, out):  # the last round's samples: every one recorded
            outcome = run.finish()
    try:
        comparison = eval_comparison(outcome.results, args.agents, args.models,
                                     shard=args.shard, plan=run.keys)
        written = write_report(comparison, args.out, baseline=baseline)
    except ReportError as exc:
        raise CLIError(str(exc)) from None
    _print_rows(comparison, outcome.mismatched, run.cassettes, out)
    print_summaries(comparison, out)
    regressions = compare_to_baseline(comparison, baseline).regressions if baseline else []
    for delta in regressions:
        for reason in delta.reasons:
            print(f"REGRESSION  {delta.key}: {reason}", file=out)
    junit_report(args, comparison, regressions, out)
    for path in written.values():
        print(f"wrote {path}", file=out)
    if paired is not None:
        for line in paired.lines():
            print(line, file=out)
        print(f"wrote {_write_paired(args, paired)}", file=out)
    _print_incomplete(outcome, out)
    return _exit_code(outcome, comparison, regressions)


def _check_options(args: argparse.Namespace) -> None:
    """What is wrong with the options, before anything is read: the report folder, the
    concurrency."""
    from agentkit.core.files import FolderRefused, replaceable_folder
    from agentkit.report import REPORT_MARKER

    writable_folder(args.out, "--out")
    try:
        replaceable_folder(args.out, REPORT_MARKER)
    except FolderRefused as exc:
        raise CLIError(f"--out {args.out}: {exc}") from None
    if args.max_concurrency is not None and args.concurrency > args.max_concurrency:
        raise CLIError(f"--concurrency {args.concurrency} is above --max-concurrency "
                       f"{args.max_concurrency}")
    for option in ("margin", "until_decided", "max_samples"):
        if getattr(args, option) not in (None, False) and args.compare is None:
            raise CLIError(f"--{option.replace('_', '-')} needs --compare A B")
    if args.max_samples is not None and not args.until_decided:
        raise CLIError("--max-samples needs --until-decided")
    if args.max_samples is not None and args.max_samples < args.samples:
        raise CLIError(f"--max-samples {args.max_samples} is below --samples {args.samples}")


def _dimension(args: argparse.Namespace) -> Any:
    """What ``--compare A B`` compares (None without it); ``--models`` (and the models
    ``--compare`` names) in their canonical spelling first."""
    from agentkit.core.errors import BadInputError
    from agentkit.eval import canonical_models, dimension_of, parse_model

    args.models = canonical_models(args.models)
    if args.compare is None:
        return None
    a, b = (name if name in args.agents else parse_model(name, "--compare").spec
            for name in args.compare)
    if a == b and list(args.compare) != [a, b]:
        raise BadInputError(f"--compare {' '.join(args.compare)}: both name the model {a}; "
                            "name two different ones")
    args.compare = [a, b]
    return dimension_of(a, b, args.agents, args.models)


def _paired(args: argparse.Namespace, outcome: Any, dimension: Any) -> Any:
    from agentkit.eval import compare

    a, b = args.compare
    return compare(outcome.results, a, b, dimension, margin=args.margin, seed=args.seed)


def _next_round(args: argparse.Namespace, run: Any, outcome: Any,
                paired: Any) -> dict[str, int] | None:
    """The samples each case should hold in the next round of ``--until-decided`` (None:
    stop -- every compared case is decided, at --max-samples, the budget is spent, or samples
    are missing that cannot be recorded now). Only undecided cases grow."""
    if not args.until_decided or paired is None or outcome.incomplete:
        return None
    if run.evaluation.budget.exhausted:
        return None
    cap = args.max_samples or 10 * args.samples
    undecided = {case.key for case in paired.cases if not paired.decided(case)}
    targets: dict[str, int] = {}
    grow = False
    for result in outcome.results:
        held = len(result.sampled.runs) + len(result.sampled.missing)
        key = (f"{result.case.scenario.name}[{result.case.model}]"
               if paired.dimension == "agent type"
               else f"{result.case.scenario.name}[{result.case.agent_type}]")
        if key in undecided and held < cap:
            targets[result.case.key] = min(cap, held + args.samples)
            grow = True
        else:
            targets[result.case.key] = held
    if not grow:
        return None
    if run.live.base_url is None:
        return None  # offline: what was recorded is what there is to decide on
    return targets


def _write_paired(args: argparse.Namespace, paired: Any) -> Any:
    """``paired.md`` in the report folder: the comparison as printed."""
    from agentkit.core.files import atomic_write_text

    path = args.out / "paired.md"
    lines = paired.lines()
    text = f"# {lines[0]}\n\n```\n" + "\n".join(lines[1:-1]) + f"\n```\n\n{lines[-1]}\n"
    atomic_write_text(path, text)
    return path


def _open(args: argparse.Namespace, progress: Any, **round_: Any) -> Any:
    """The evaluation the options ask for, its cassettes opened."""
    from agentkit.eval import EvalRun, LiveSettings

    live = LiveSettings(base_url=args.base_url, temperature=args.temperature, seed=args.seed,
                        timeout=args.timeout, concurrency=args.concurrency,
                        max_concurrency=args.max_concurrency, cooldown=args.cooldown,
                        max_calls=args.max_calls, max_tokens=args.max_tokens,
                        max_answer_tokens=args.max_answer_tokens)
    return EvalRun(scenario_paths(args), args.agents, args.models, args.samples, live,
                   cassettes=args.cassettes, shard=args.shard, progress=progress, **round_)


def _record(args: argparse.Namespace, run: Any, progress: Any, out: TextIO) -> None:
    """Record what is missing, saying first how much that is and where it is recorded from,
    after it what the live calls took."""
    from agentkit.core.errors import BadInputError

    evaluation = run.evaluation
    shard = f" (shard {args.shard[0]}/{args.shard[1]})" if args.shard else ""
    print(f"evaluating {len(evaluation.cases)} cases{shard} × {args.samples} samples: "
          f"{evaluation.recorded} recorded, {len(run.todo)} to record", file=out, flush=True)
    try:
        run.check_models()
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    if run.records_live:
        from agentkit.eval import parse_model

        growth = "" if args.max_concurrency is None else f", up to {args.max_concurrency}"
        own = [parse_model(m).temperature for m in args.models]
        temperature = (f"temperature {args.temperature:g}" if all(t is None for t in own)
                       else "temperature " + ", ".join(
                           f"{args.temperature if t is None else t:g}" for t in own)
                       + " by model")
        print(f"recording with {args.base_url} ({temperature}, sample i "
              f"with seed {args.seed} + i, {args.concurrency} requests in flight{growth})",
              file=out, flush=True)

    def interrupted(evaluation: Any) -> None:
        progress.close()
        tell(f"agentkit: interrupted: waiting for the {evaluation.in_flight()} requests in "
             "flight to be saved (Ctrl-C again to quit now; the cassettes are whole either "
             "way)")

    evaluation.on_interrupt = interrupted
    try:
        run.record()
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    finally:
        progress.close()
    if run.todo:
        spent, limiter = evaluation.budget, evaluation.limiter
        retried = f" ({spent.retried} of them retries)" if spent.retried else ""
        print(f"live: {spent.calls:,} calls{retried}, {spent.tokens:,} tokens, "
              f"{limiter.rate_limits} "
              f"rate limits in {limiter.episodes} episodes (requests in flight: "
              f"{limiter.limit} at the end)", file=out)


def _print_rows(comparison: Any, mismatched: set[str], cassettes: dict[str, Any],
                out: TextIO) -> None:
    """A line per case (its pass rate and class), its warning, problems and disagreements,
    and how to record it anew when its agent asks what its samples do not hold."""
    from agentkit.report import undecided_text

    for row in comparison.rows:
        print(_row_line(row), file=out)
        if row.result == "undecided":
            print(f"      {undecided_text(row)}", file=out)
        if row.gate_warning is not None:
            print(f"      warning: {row.gate_warning}", file=out)
        if row.status != "pass":
            for problem in row.problems[:3]:
                print("      - " + problem.replace("\n", "\n        "), file=out)
        print_disagreements(row.disagreements, out)
        if row.key in mismatched:
            print(f"      the agent's requests changed since its samples were recorded; if "
                  f"that is intended, record them anew: remove {cassettes[row.key]} and run "
                  "this command again with --base-url", file=out)


def _row_line(row: Any) -> str:
    """``PASS  scenario[agent] @ model  5 samples: pass rate 80% (4/5, 95% interval ...)``."""
    status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR",
              "undecided": "UNDECIDED"}[row.result]
    rate = (f"pass rate {row.pass_rate:.0%} ({row.passes}/{row.judged_runs}, "
            f"{(row.confidence or 0.95):.0%} interval {row.interval[0]:.0%}-"
            f"{row.interval[1]:.0%})" if row.pass_rate is not None and row.interval
            else "no sample replays to its end, so no pass rate" if row.status == "fail"
            else "no pass rate")
    extra = "".join([f", {row.infra_errors} infrastructure errors" if row.infra_errors
                     else "", f", {row.not_recorded} not recorded" if row.not_recorded
                     else ""])
    labelled = f" · {row.class_}" if row.class_ else ""
    counted = f"{row.samples} samples{extra}: " if row.samples or extra else ""
    return f"{status}  {row.key:<45} {counted}{rate}{labelled}"


def _print_incomplete(outcome: Any, out: TextIO) -> None:
    """Why the report is partial, if it is: a call that cannot be made again (the model
    unreachable, or still generating an answer that timed out), samples left to record."""
    if outcome.unreachable is not None:
        print(f"INCOMPLETE  the evaluation stopped: {outcome.unreachable}", file=out)
    left = outcome.missing
    if left:
        detail = ", ".join(f"{key}: {count}" for key, count in list(left.items())[:5])
        print(f"INCOMPLETE  {outcome.why_missing()}: {sum(left.values())} of {outcome.total} "
              f"samples not recorded ({detail}{', ...' if len(left) > 5 else ''}); the report "
              "is partial. Run the same command again to record them (nothing recorded is "
              "asked again).", file=out)


def _exit_code(outcome: Any, comparison: Any, regressions: list[Any]) -> int:
    """1 for a failed case or a regression; else 3 if the evaluation is incomplete. Samples
    that hit infrastructure errors or are not recorded yet make it incomplete, never a
    failure of the agent."""
    rows = comparison.rows
    failed = [row for row in rows if row.status == "fail"
              or (row.status == "error" and row.samples and row.class_ != "infra_error")]
    if failed or regressions:
        return EXIT_FAILED
    incomplete = outcome.incomplete or any(row.status == "error" for row in rows)
    return EXIT_INCOMPLETE if incomplete else EXIT_OK
