"""``agentkit judge calibrate``: each labels file's judge asked about every labelled
transcript (replayed from its recording, or recorded through ``--base-url``), its agreement
with people printed -- kappa with its interval, base rates, confusion per criterion,
self-consistency -- stamped with the judge's model and the rubric's hash; exit 1 under the
floor."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from agentkit.cli._common import EXIT_FAILED, EXIT_OK, CLIError, shown, writable_file

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import HarnessError
    from agentkit.core.files import atomic_write_text
    from agentkit.quality import calibrate, labels_in, load_labels

    if args.json is not None:
        writable_file(args.json, "--json")
    if args.model is not None and args.base_url is None:
        raise CLIError("--model names the judge model to record with: give --base-url too "
                       "(without it the recording is replayed, offline)")
    folder = args.project.root / "judges"
    paths = [Path(p) for p in args.labels] or [shown(p) for p in labels_in(folder)]
    if not paths:
        raise CLIError(f"no labels files in {shown(folder)} (judges/<rubric>.labels.yaml); give "
                       "labels files, or see docs/suite-quality.md for the format")
    results, failed = [], False
    for path in paths:
        try:
            live = None
            if args.base_url is not None:
                labels = load_labels(path)
                live = _live(args, labels.model)
            calibration = calibrate(path, live=live,
                                    mode="none" if live is None else args.mode,
                                    min_kappa=args.min_kappa)
        except HarnessError as exc:
            raise CLIError(str(exc)) from None
        _print(calibration, out)
        failed = failed or calibration.status != "calibrated"
        results.append(calibration.to_dict())
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}", file=out)
    return EXIT_FAILED if failed else EXIT_OK


def _live(args: argparse.Namespace, named: str | None) -> Any:
    from agentkit.llms.errors import LLMError
    from agentkit.llms.openai import DEFAULT_MODEL, OpenAI

    if named is not None and args.model is not None and args.model != named:
        raise CLIError(f"the labels file names the judge model `{named}`, and --model says "
                       f"`{args.model}`; drop --model or change the file (verdicts are keyed "
                       "by the judge's model)")
    try:
        return OpenAI(model=args.model or named or DEFAULT_MODEL, base_url=args.base_url,
                      timeout=args.timeout, temperature=0.0)
    except (LLMError, ValueError) as exc:
        raise CLIError(str(exc)) from None


def _kappa(value: float | None, interval: tuple[float, float] | None) -> str:
    if value is None:
        return "undefined"
    return f"{value:.2f}" + (f" ({interval[0]:.2f} to {interval[1]:.2f})"
                             if interval is not None else " (no interval)")


def _print(calibration: Any, out: TextIO) -> None:
    from tabulate import tabulate

    labels, overall = calibration.labels, calibration.overall
    people, judge, items = overall.base_rates()
    print(f"{labels.path}: {labels.rubric!r}", file=out)
    print(f"  judge model {', '.join(calibration.models) or '-'} · rubric "
          f"{calibration.rubric_hash} · {len(labels.items)} labelled items · "
          f"{labels.samples} sample{'s' if labels.samples != 1 else ''} each", file=out)
    interval = overall.interval
    print(f"  Cohen's kappa {_kappa(overall.kappa, None).removesuffix(' (no interval)')}"
          + (f", {overall.confidence:.0%} interval {interval[0]:.2f} to {interval[1]:.2f} "
             f"(percentile bootstrap over the {items} items, {calibration.resamples} "
             f"resamples, seed {overall.seed})" if interval is not None else ""), file=out)
    if items:
        print(f"  base rate: people pass {people} of {items} ({people / items:.0%}), the "
              f"judge {judge} ({judge / items:.0%})", file=out)
    agree, repeated = overall.consistency()
    print("  self-consistency: " + (f"{agree} of {repeated} items judged alike in every "
                                    "sample" if repeated else "not measured (1 sample per "
                                                              "item)"), file=out)
    rows = []
    for agreement in (overall, *calibration.criteria):
        c = agreement.confusion()
        rows.append([agreement.name, _kappa(agreement.kappa, agreement.interval),
                     c["both_pass"], c["people_only"], c["judge_only"], c["both_fail"]])
    print("\n" + "\n".join("  " + line for line in tabulate(
        rows, headers=["criterion", "kappa (interval)", "both pass", "people only",
                       "judge only", "both fail"], tablefmt="simple").splitlines()), file=out)
    for agreement in (overall, *calibration.criteria):
        for verdict in agreement.unjudged:
            print(f"  not judged: {agreement.name} of {verdict.item}: {verdict.error}", file=out)
    status = calibration.status
    floor = f"min_kappa {calibration.floor:g}"
    print("  " + {"calibrated": f"CALIBRATED  kappa is at least {floor}",
           "below_floor": f"BELOW THE FLOOR  kappa is under {floor}: reports call judged "
                          "expectations with this rubric uncalibrated",
           "undefined": f"UNDEFINED  kappa cannot be computed (people and the judge each "
                        f"gave every item one verdict); {floor} is not met"}[status],
          file=out)
    print(file=out)
