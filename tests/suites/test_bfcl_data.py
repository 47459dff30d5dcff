"""The ``suites`` lane: BFCL's real data (``pip install --no-deps 'bfcl-eval>=2026.3'``, as
.ci/run does). The whole single-turn set is written and loads; agentkit's expectations and
BFCL's own AST checker (tests/suites/_bfcl_checker.py) give every answer the same verdict --
right answers (the first and the last possible answer, parallel calls reversed) and wrong ones
(a wrong value, a missing required argument, an extra call, the wrong function, a call where
none fits) -- so agentkit's per-category accuracy is BFCL's."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.scenario import load_scenario
from agentkit.suites import bfcl
from tests.suites._scoring import agentkit_passes

pytestmark = pytest.mark.suites

COUNTS = {"simple": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200,
          "irrelevance": 240}
CHECKER = Path(__file__).parent / "_bfcl_checker.py"
#: answers BFCL's greedy order-free check fails and agentkit passes (bfcl-eval 2026.3.23:
#: parallel_178 with its four calls reversed)
KNOWN_GREEDY_MISSES = {"simple": 0, "multiple": 0, "parallel": 1, "parallel_multiple": 0,
                       "irrelevance": 0}


@pytest.fixture(scope="module")
def data() -> Path:
    # no skip: the lane installs bfcl-eval, and a lane without it must fail, saying so
    return bfcl.data_folder()


def test_the_whole_single_turn_set_is_written_and_loads(data: Path, tmp_path: Path):
    written = bfcl.write_suite(tmp_path, list(bfcl.CATEGORIES))

    assert written == COUNTS
    files = sorted(tmp_path.rglob("*.yaml"))
    assert len(files) == 1240
    assert all(load_scenario(path).tags[0] == "bfcl" for path in files)


def _first(options: list[Any]) -> Any:
    value = next((option for option in options if option != ""), None)
    if isinstance(value, dict):
        return {key: inner for key, options in value.items()
                if (inner := _first(options)) is not None}
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [{key: inner for key, options in item.items()
                 if (inner := _first(options)) is not None} for item in value]
    return value


def _call(entry: dict[str, Any], pick: str, case: bfcl.Case) -> dict[str, Any]:
    (name, params), = entry.items()
    function = next(f for f in case.functions if f["name"] == name)
    args = {}
    for param, options in params.items():
        if param not in function["parameters"]["properties"]:
            continue  # an answer may list one the function does not have
        if pick == "last":
            if "" in options:
                continue  # an optional argument left out
            options = list(reversed(options))
        value = _first(options)
        if value is not None:
            args[param] = value
    return {bfcl.tool_name(name): args}


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1009
    if isinstance(value, float):
        return value + 1009.5
    if isinstance(value, str):
        return value + " zq9"
    if isinstance(value, list):
        return [*value, value[0] if value else "zq9"]
    return {"zq9": 1}


def answers(case: bfcl.Case) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Named answers to ``case``, right and wrong, in BFCL's decoded form."""
    names = [bfcl.tool_name(f["name"]) for f in case.functions]
    if case.answers is None:
        yield "no call", []
        yield "a call", [{names[0]: {}}]
        return
    first = [_call(entry, "first", case) for entry in case.answers]
    yield "first", first
    yield "last", [_call(entry, "last", case) for entry in case.answers]
    if len(first) > 1:
        yield "reversed", list(reversed(first))
    (name, args), = first[0].items()
    if args:
        key = next(iter(args))
        yield "wrong value", [{name: {**args, key: _wrong(args[key])}}, *first[1:]]
    function = next(f for f in case.functions if bfcl.tool_name(f["name"]) == name)
    required = [p for p in function["parameters"].get("required", []) if p in args]
    if required:
        yield "missing required", [{name: {k: v for k, v in args.items()
                                           if k != required[0]}}, *first[1:]]
    yield "extra call", [*first, copy.deepcopy(first[0])]
    other = next((n for n in names if n != name), "zq9_function")
    yield "wrong function", [{other: args}, *first[1:]]


def bfcl_verdicts(cases: list[tuple[bfcl.Case, list[list[dict[str, Any]]]]]) -> list[list[bool]]:
    payload = [{"category": bfcl.CATEGORIES[case.category], "functions": case.functions,
                "ground_truth": case.answers, "answers": given} for case, given in cases]
    done = subprocess.run([sys.executable, str(CHECKER)], input=json.dumps(payload),
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    verdicts: list[list[bool]] = json.loads(done.stdout)
    return verdicts


@pytest.mark.parametrize("category", list(bfcl.CATEGORIES))
def test_agentkit_and_bfcls_checker_give_every_answer_the_same_verdict(
        data: Path, tmp_path: Path, category: str):
    cases = list(bfcl.read_cases(data, category))
    named = [(case, list(answers(case))) for case in cases]
    theirs = bfcl_verdicts([(case, [calls for _, calls in given]) for case, given in named])
    disagree, accuracy, passed_first = [], {}, {}
    for (case, given), verdicts in zip(named, theirs, strict=True):
        scenario = tmp_path / f"{case.id}.yaml"
        scenario.write_text(bfcl.scenario_text(case), encoding="utf-8")
        passed_first[case.id] = verdicts[0]
        for (kind, calls), expected in zip(given, verdicts, strict=True):
            ours = agentkit_passes(scenario, calls, tmp_path)
            if ours != expected:
                disagree.append(f"{case.id} {kind}: agentkit {ours}, BFCL {expected}: {calls}")
            both = accuracy.setdefault(kind, [0, 0, 0])
            both[0] += ours
            both[1] += expected
            both[2] += 1

    # BFCL's order-free check is greedy (each expected call takes the first made call that
    # fits it), so it can miss an assignment of every call that exists; agentkit's finds one
    # whenever one exists. The answers to tell apart: calls in another order than an answer
    # BFCL passes, passed by agentkit only.
    greedy = {line for line in disagree
              if " reversed: agentkit True, BFCL False" in line
              and passed_first.get(line.split()[0])}
    assert [line for line in disagree if line not in greedy] == []
    assert len(greedy) <= KNOWN_GREEDY_MISSES[category], sorted(greedy)
    assert {kind: ours - (kind == "reversed") * len(greedy)
            for kind, (ours, _, _) in accuracy.items()} == {
        kind: theirs for kind, (_, theirs, _) in accuracy.items()}
    # the answers tell right from wrong: BFCL passes the right ones, fails the wrong ones
    right = {"first", "no call"}
    for kind, (_, theirs, total) in accuracy.items():
        if kind in right:
            assert theirs == total, kind
        if kind in {"extra call", "a call", "wrong function"}:
            assert theirs == 0, kind
