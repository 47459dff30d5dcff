"""A live evaluation of BFCL, recorded (docs/suites.md, "A live evaluation, recorded"): the
first 10 cases of each single-turn category (50), evaluated with ``agentkit eval`` under
``function_calling`` against the local model (scripts/live-model with a 2,048-token context:
SmolLM2-135M-Instruct on llama.cpp), one sample per case at temperature 0, every sample
recorded. The scenarios, the recording and the live run's scores are committed under
tests/suites/bfcl_live/, so this replays it offline without bfcl-eval and must give the live
run's scores exactly: BFCL's AST accuracy per category and every case's result with the calls
that decided it (``recorded.json``, written from the live run's report). The live lane records
the first case of each category again (tests/live/test_bfcl_live.py); the suites lane checks
the scenarios are what ``agentkit suite bfcl --limit 10`` writes from BFCL's data."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml

from agentkit.cli import main
from agentkit.suites import bfcl
from tests.suites._scoring import bfcl_scores

LIVE = Path(__file__).parent / "bfcl_live"
SCENARIOS = LIVE / "bfcl"
CASSETTES = LIVE / "cassettes"
RECORDED = json.loads((LIVE / "recorded.json").read_text(encoding="utf-8"))
MODEL = "smollm2-135m-instruct"
PER_CATEGORY = 10


def eval_command(scenarios: Path, cassettes: Path, out: Path, model: str = MODEL) -> list[str]:
    """The live run's command less its server (``--base-url``): offline, every sample must be
    recorded."""
    return ["eval", str(scenarios), "--agents", "function_calling", "--models", model,
            "--samples", "1", "--temperature", "0", "--concurrency", "1", "--cassettes",
            str(cassettes), "--out", str(out)]


def test_the_subset_is_the_first_cases_of_every_category_each_with_its_recording():
    files = sorted(SCENARIOS.rglob("*.yaml"))

    assert len(files) == PER_CATEGORY * len(bfcl.CATEGORIES)
    for category, stem in bfcl.CATEGORIES.items():
        ids = sorted(path.stem for path in (SCENARIOS / category).glob("*.yaml"))
        assert ids == [f"{stem}_{n}" for n in range(PER_CATEGORY)], category
    # one sampled cassette per case, of the model and sampling the docs name, complete
    cassettes = sorted(CASSETTES.glob("*.yaml"))
    assert [path.name for path in cassettes] == sorted(
        f"{path.stem}.function_calling.{MODEL}.yaml" for path in files)
    for path in cassettes:
        cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert (cassette["model"], cassette["samples"], cassette["complete"],
                cassette["sampling"]) == (MODEL, 1, [0], {"temperature": 0.0, "seed": 0})


@pytest.mark.slow  # the agentkit command over every recorded call, judged offline
def test_the_recorded_evaluation_replays_offline_to_the_live_runs_scores(tmp_path: Path):
    out = io.StringIO()
    with contextlib.redirect_stderr(io.StringIO()):
        code = main(eval_command(SCENARIOS, CASSETTES, tmp_path / "report"), out=out)
    printed = out.getvalue()

    cases = PER_CATEGORY * len(bfcl.CATEGORIES)
    assert f"evaluating {cases} cases × 1 samples: {cases} recorded, 0 to record" in printed
    # exit 1: the small model fails cases, as it did live -- no sample is missing (that is 3)
    assert code == 1, printed
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    scores = bfcl_scores(report)
    assert scores == RECORDED["scores"]
    assert sum(passed for passed, _ in scores["accuracy"].values()) == RECORDED["passed"]
    assert sum(case["llm_calls"] for case in scores["cases"].values()) == (
        RECORDED["live_run"]["model_calls"])
    assert all(row["samples"] == 1 and row["class"] != "infra_error" for row in report["rows"])


@pytest.mark.suites  # reads BFCL's data: `pip install --no-deps 'bfcl-eval>=2026.3'`
def test_the_committed_scenarios_are_what_the_adapter_writes_from_bfcls_data(tmp_path: Path):
    written = bfcl.write_suite(tmp_path, list(bfcl.CATEGORIES), limit=PER_CATEGORY)

    assert written == dict.fromkeys(bfcl.CATEGORIES, PER_CATEGORY)
    for path in sorted(tmp_path.rglob("*.yaml")):
        committed = SCENARIOS / path.relative_to(tmp_path)
        assert yaml.safe_load(committed.read_text(encoding="utf-8")) == yaml.safe_load(
            path.read_text(encoding="utf-8")), committed
