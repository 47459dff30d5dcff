"""``agentkit faults``: each scenario expanded into its fault variants and run under its
agent types offline, every cell classified; the matrix report, the traces and the exit code."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    check_agent_types,
    load_scenario,
    shown,
    writable_folder,
)

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.harness import run_fault_matrix
    from agentkit.report import fault_junit_cases, write_fault_report

    check_agent_types(args.agents)
    writable_folder(args.out, "--out")
    matrices = []
    for path in args.scenarios:
        scenario = load_scenario(path)
        if args.base_url is not None and not _record(args, scenario, out):
            return EXIT_FAILED
        try:
            matrix = run_fault_matrix(scenario, kinds=args.kinds, tools=args.tools,
                                      max_variants=args.max_variants, agent_types=args.agents)
        except BadInputError as exc:
            raise CLIError(str(exc)) from None
        matrices.append(matrix)
        types = matrix.agent_types
        print(f"{scenario.name}: {len(matrix.variants)} fault variants × {len(types)} agent "
              f"types ({', '.join(types)})", file=out)
        for agent_type in types:
            counts: dict[str, int] = {}
            for variant in matrix.variants:
                outcome = matrix.outcome(variant, agent_type)
                counts[outcome] = counts.get(outcome, 0) + 1
            print(f"  {agent_type}: " + ", ".join(f"{n} {c.replace('_', ' ')}"
                                                  for c, n in sorted(counts.items())), file=out)
        for (label, agent_type), case in matrix.cells.items():
            if not case.passed:
                lines = case.verdict.lines()
                print(f"FAIL {scenario.name}[{agent_type}]~{label}: "
                      f"{lines[0].removeprefix('- ') if lines else case.verdict.outcome}",
                      file=out)
        for agent_type, why in matrix.left_out.items():
            print(f"  not run: {agent_type} ({why})", file=out)
    report = write_fault_report(matrices, args.out)
    print(f"wrote {shown(report)}", file=out)
    if args.junit_xml:
        from agentkit.report import write_junit

        print(f"wrote {write_junit(args.junit_xml, fault_junit_cases(matrices))}", file=out)
    return EXIT_OK if all(matrix.passed for matrix in matrices) else EXIT_FAILED


def _record(args: argparse.Namespace, scenario: object, out: TextIO) -> bool:
    """``--base-url``: the continuations the recorded agent types lack, recorded live (each
    variant from the recorded run up to its fault); False when one could not be."""
    from agentkit.core.errors import BadInputError
    from agentkit.harness import offline_agent_types, record_fault_continuations
    from agentkit.llms.errors import LLMError
    from agentkit.llms.openai import OpenAI
    from agentkit.scenario import Scenario

    assert isinstance(scenario, Scenario)
    chosen = args.agents if args.agents is not None else list(scenario.agents)
    offline = offline_agent_types(scenario)
    try:
        live = OpenAI(model=args.model, base_url=args.base_url, timeout=args.timeout,
                      temperature=args.temperature, additional_kwargs={"seed": args.seed})
    except (LLMError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    for agent_type in [name for name in chosen if name in scenario.agents
                       and name not in offline]:
        print(f"{scenario.name} [{agent_type}]: recording each fault variant's continuation "
              f"with {args.model} at {args.base_url} (from the recorded run up to its fault)",
              file=out, flush=True)

        def shown_variant(variant: Any, recorded: int) -> None:
            print(f"  {variant.label}: " + (f"{recorded} call{'s' if recorded != 1 else ''} recorded"
                                    if recorded else "recorded already"), file=out, flush=True)

        try:
            recording = record_fault_continuations(
                scenario, agent_type, live, kinds=args.kinds, tools=args.tools,
                max_variants=args.max_variants, on_variant=shown_variant)
        except BadInputError as exc:
            raise CLIError(str(exc)) from None
        for problem in recording.problems:
            print(f"FAIL  {problem}", file=out)
        if not recording.ok:
            return False
        print(f"  {recording.cassette}: {recording.prefix} exchanges of the recorded run, "
              f"shared; {sum(recording.recorded.values())} recorded after faults",
              file=out, flush=True)
    return True
