"""``agentkit eval``: agent types × models on N live samples each (the evaluation is
:mod:`agentkit.eval`'s), its report and the exit code."""

from __future__ import annotations

import argparse
import sys
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
from agentkit.cli._printing import junit_report, print_disagreements, print_summaries

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.core.files import FolderRefused, replaceable_folder
    from agentkit.eval.live import AdaptiveConcurrency, Budget
    from agentkit.eval.matrix import Evaluation, plan, shard_of
    from agentkit.eval.progress import EvalProgress
    from agentkit.llms.openai import OpenAI
    from agentkit.report import (
        ReportError,
        compare_to_baseline,
        eval_comparison,
        load_comparison,
        write_report,
    )
    from agentkit.report.render import REPORT_MARKER

    writable_folder(args.out, "--out")
    try:
        replaceable_folder(args.out, REPORT_MARKER)
    except FolderRefused as exc:
        raise CLIError(f"--out {args.out}: {exc}") from None
    if args.concurrency > args.max_concurrency:
        raise CLIError(f"--concurrency {args.concurrency} is above --max-concurrency "
                       f"{args.max_concurrency}")
    try:
        baseline = load_comparison(args.baseline) if args.baseline else None
        cases = plan(scenario_paths(args), args.agents, args.models, cassettes=args.cassettes)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    keys = [case.key for case in cases]
    cassettes = {case.key: case.cassette for case in cases}
    if args.shard is not None:
        cases = [c for c in cases if shard_of(c.key, args.shard[1]) == args.shard[0]]

    def live(model: str, seed: int) -> Any:
        return OpenAI(model=model, base_url=args.base_url, timeout=args.timeout,
                      temperature=args.temperature, max_retries=0,
                      additional_kwargs={"seed": seed})

    progress = EvalProgress(sys.stderr)
    evaluation = Evaluation(
        cases, args.samples, live if args.base_url else None,
        sampling={"temperature": args.temperature, "seed": args.seed},
        limiter=AdaptiveConcurrency(args.concurrency, maximum=args.max_concurrency,
                                    cooldown=args.cooldown),
        budget=Budget(args.max_calls, args.max_tokens), workers=args.max_concurrency,
        progress=progress)
    try:
        evaluation.open()
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    todo = evaluation.todo
    shard = f" (shard {args.shard[0]}/{args.shard[1]})" if args.shard else ""
    print(f"evaluating {len(cases)} cases{shard} × {args.samples} samples: "
          f"{evaluation.recorded} recorded, {len(todo)} to record", file=out, flush=True)
    if todo and args.base_url:
        served = _served_models(args.base_url, args.timeout)
        unknown = [m for m in args.models if served is not None and m not in served
                   and any(case.model == m for case, _ in todo)]
        if unknown:
            raise CLIError(f"--models: unknown model {unknown[0]!r}: the server at "
                           f"{args.base_url} serves {', '.join(served or []) or 'none'}")
        print(f"recording with {args.base_url} (temperature {args.temperature:g}, sample i "
              f"with seed {args.seed} + i, {args.concurrency} requests in flight to start)",
              file=out, flush=True)
    def interrupted(evaluation: Evaluation) -> None:
        progress.close()
        tell(f"agentkit: interrupted: waiting for the {evaluation.in_flight()} requests in "
              "flight to be saved (Ctrl-C again to quit now; the cassettes are whole either "
              "way)")

    evaluation.on_interrupt = interrupted
    try:
        evaluation.record()
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    except KeyboardInterrupt:
        # the pipe a `| tee` read may be gone (Ctrl-C ended it too): the lines are best effort
        tell(f"agentkit: interrupted: {evaluation.recorded} of {evaluation.total} samples "
              f"recorded and kept ({evaluation.calls_kept} calls in the cassettes); run the "
              "same command again to record the rest (no recorded call is asked again)")
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    spent = evaluation.budget
    if todo:
        limiter = evaluation.limiter
        retried = f" ({spent.retried} of them retries)" if spent.retried else ""
        print(f"live: {spent.calls:,} calls{retried}, {spent.tokens:,} tokens, "
              f"{limiter.rate_limits} "
              f"rate limits in {limiter.episodes} episodes (requests in flight: "
              f"{limiter.limit} at the end)", file=out)
    left = evaluation.missing()
    if spent.exhausted and left and evaluation.done == 0 and evaluation.recorded == 0:
        raise CLIError(f"the budget ({spent.describe()}) ran out before one run of a sample "
                       "finished: it is below what one run takes; give a larger --max-calls / "
                       "--max-tokens")
    try:
        results = evaluation.results()
        comparison = eval_comparison(results, args.agents, args.models,
                                     shard=args.shard, plan=keys)
        written = write_report(comparison, args.out, baseline=baseline)
    except ReportError as exc:
        raise CLIError(str(exc)) from None
    mismatched = {result.case.key for result in results
                  if result.sampled.verdict.has("recording_mismatch")}
    for row in comparison.rows:
        status = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[row.status]
        rate = (f"pass rate {row.pass_rate:.0%} ({row.passes}/{row.judged_runs}, "
                f"{(row.confidence or 0.95):.0%} interval {row.interval[0]:.0%}-"
                f"{row.interval[1]:.0%})" if row.pass_rate is not None and row.interval
                else "no sample replays to its end, so no pass rate" if row.status == "fail"
                else "no pass rate")
        extra = "".join([f", {row.infra_errors} infrastructure errors" if row.infra_errors
                         else "", f", {row.not_recorded} not recorded" if row.not_recorded
                         else ""])
        shown = f" · {row.class_}" if row.class_ else ""
        counted = f"{row.samples} samples{extra}: " if row.samples or extra else ""
        print(f"{status}  {row.key:<45} {counted}{rate}{shown}", file=out)
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
    print_summaries(comparison, out)
    regressions = compare_to_baseline(comparison, baseline).regressions if baseline else []
    for delta in regressions:
        for reason in delta.reasons:
            print(f"REGRESSION  {delta.key}: {reason}", file=out)
    junit_report(args, comparison, regressions, out)
    for path in written.values():
        print(f"wrote {path}", file=out)
    incomplete = bool(left) or evaluation.unreachable is not None
    if evaluation.unreachable is not None:
        print(f"INCOMPLETE  the model could not be reached: {evaluation.unreachable}", file=out)
    if left:
        missing = sum(left.values())
        why = ("the budget ran out (" + spent.describe() + ")" if spent.exhausted
               else "samples hit infrastructure errors" if evaluation.infra else "stopped")
        detail = ", ".join(f"{key}: {count}" for key, count in list(left.items())[:5])
        print(f"INCOMPLETE  {why}: {missing} of {evaluation.total} samples not recorded "
              f"({detail}{', ...' if len(left) > 5 else ''}); the report is partial. Run the "
              "same command again to record them (nothing recorded is asked again).", file=out)
    # infrastructure errors and samples not recorded yet make the run incomplete, never a
    # failure of the agent
    failed = [row for row in comparison.rows if row.status == "fail"
              or (row.status == "error" and row.samples and row.class_ != "infra_error")]
    if failed or regressions:
        return EXIT_FAILED
    incomplete = incomplete or any(row.status == "error" for row in comparison.rows)
    return EXIT_INCOMPLETE if incomplete else EXIT_OK


def _served_models(base_url: str, timeout: float) -> list[str] | None:
    """The models an OpenAI-compatible server lists at ``/models`` (None: it lists none)."""
    import httpx

    try:
        answer = httpx.get(base_url.rstrip("/") + "/models", timeout=min(timeout, 30.0))
        data = answer.json() if answer.status_code == 200 else None
    except Exception:  # noqa: BLE001 (a probe: a server that cannot list its models is not checked)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return [str(m.get("id")) for m in data["data"] if isinstance(m, dict) and m.get("id")]
