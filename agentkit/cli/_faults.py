"""``agentkit faults``: each scenario expanded into its fault variants and run under its
agent types offline, every cell classified; the matrix report, the traces and the exit code."""

from __future__ import annotations

import argparse
from typing import TextIO

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
    from agentkit.report.faults import fault_junit_cases, write_fault_report

    check_agent_types(args.agents)
    writable_folder(args.out, "--out")
    matrices = []
    for path in args.scenarios:
        scenario = load_scenario(path)
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
        from agentkit.report.junit import write_junit

        print(f"wrote {write_junit(args.junit_xml, fault_junit_cases(matrices))}", file=out)
    return EXIT_OK if all(matrix.passed for matrix in matrices) else EXIT_FAILED
