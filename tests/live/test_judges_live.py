"""The live lane for LLM judges and simulated users (``pytest -m live``): a conversation the
live model has with itself (as the agent and as the simulated user) and a verdict of the live
model as a judge are recorded, replay offline to the same trace, and a changed rubric is a
cassette miss naming the rubric.

The model is tiny: it plays a user well enough, but as a judge it answers ``fail`` whatever
the answer, so the judged scenario here has it vote in a panel with two scripted judges --
the test checks what is recorded and replayed, not the verdict's merit."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentkit.scenario.llm_judge import parse_verdict

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "judges.md"
MODEL = os.environ.get("AGENTKIT_LIVE_MODEL", "smollm2-135m-instruct")
LIVE = ("--model", MODEL, "--temperature", "0", "--seed", "0")

#: the live model judges with its answer held to the verdict's JSON (llama.cpp's grammar)
JUDGED = """\
format: 1
name: capital
turns:
  - user: What is the capital of France? Answer in one sentence.
expect:
  answer: {judge: "names Paris as the capital of France"}
judge:
  - params:
      max_tokens: 60
      response_format:
        type: json_object
        schema:
          type: object
          properties:
            verdict: {type: string, enum: [pass, fail]}
            reason: {type: string, minLength: 1}
          required: [verdict, reason]
  - script: ['{"verdict": "pass", "reason": "scripted vote of the live lane"}']
  - script: ['{"verdict": "pass", "reason": "scripted vote of the live lane"}']
agents:
  react:
    recording: cassettes/capital.react.yaml
"""


def _agentkit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=1800)


def _project(folder: Path) -> Path:
    for name in ("scenarios/live_roles", "mocks"):
        shutil.copytree(ROOT / name, folder / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (folder / "pyproject.toml").write_text('[project]\nname = "lane"\nversion = "0"\n')
    return folder


def _live_block(tag: str = "# live:") -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    live = [block for block in blocks if block.startswith(tag)]
    assert len(live) == 1
    return [line for line in live[0].splitlines() if line.strip() and not line.startswith("#")]


def test_the_guides_live_commands_record_a_simulated_conversation_that_replays(tmp_path,
                                                                             live_url):
    project = _project(tmp_path)
    environment = {**os.environ, "url": live_url,
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(_live_block())],
                          cwd=project, env=environment, capture_output=True, text=True,
                          timeout=3600)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "replay reproduces the recorded trace" in done.stdout
    cassette = yaml.safe_load((project / "scenarios/live_roles/cassettes/"
                               "live_simulated_user.react.yaml").read_text())
    users = [e for e in cassette["exchanges"] if e.get("role") == "user"]
    assert users and all(e["key"]["model"] == MODEL for e in users)
    trace = json.loads((project / "scenarios/live_roles/__snapshots__/live_simulated_user/"
                        "react.json").read_text())
    assert len(trace["turns"]) >= 2
    assert trace["turns"][-1]["goal"]["reached"] is True


def test_a_live_judges_recorded_vote_replays_and_misses_when_the_rubric_changes(tmp_path,
                                                                              live_url):
    scenario = tmp_path / "scenarios" / "capital.yaml"
    scenario.parent.mkdir()
    scenario.write_text(JUDGED)

    recorded = _agentkit(tmp_path, "record", str(scenario), "--agent", "react", "--base-url",
                         live_url, *LIVE)

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassette = yaml.safe_load((scenario.parent / "cassettes" / "capital.react.yaml").read_text())
    judge = [e for e in cassette["exchanges"] if e.get("role") == "judge"]
    assert [e["key"]["at"] for e in judge] == ["expect.answer.judge"]
    assert json.loads(judge[0]["response"]["message"]["content"])["verdict"] in ("pass", "fail")
    assert "replay reproduces the recorded trace" in _agentkit(
        tmp_path, "replay", str(scenario)).stdout

    scenario.write_text(JUDGED.replace("names Paris", "names Paris, and only Paris,"))
    changed = _agentkit(tmp_path, "run", str(scenario), "--snapshots", "off")

    assert changed.returncode == 1
    assert "no recorded verdict of the judge for expect.answer.judge" in changed.stdout
    assert "the rubric changed" in changed.stdout


def _verdict(answer: str) -> str:
    try:
        return parse_verdict(answer).verdict
    except ValueError:
        return "no verdict"


#: the live model as the agent and as the judge, three samples at temperature 0.8
SAMPLED = JUDGED.replace("""  - script: ['{"verdict": "pass", "reason": "scripted vote of the live lane"}']
  - script: ['{"verdict": "pass", "reason": "scripted vote of the live lane"}']
""", "")


def test_a_live_sampled_recording_judges_each_sample_and_replays_its_verdicts(tmp_path,
                                                                              live_url):
    scenario = tmp_path / "scenarios" / "capital.yaml"
    scenario.parent.mkdir()
    scenario.write_text(SAMPLED)

    recorded = _agentkit(tmp_path, "record", str(scenario), "--agent", "react", "--base-url",
                         live_url, "--model", MODEL, "--samples", "3", "--temperature", "0.8",
                         "--seed", "0")

    assert "wrote " in recorded.stdout, recorded.stdout + recorded.stderr
    cassette = yaml.safe_load((scenario.parent / "cassettes" / "capital.react.yaml").read_text())
    judged = [(e["sample"], e["key"]["model"]) for e in cassette["exchanges"]
              if e.get("role") == "judge"]
    assert judged == [(0, MODEL), (1, MODEL), (2, MODEL)]
    # what the judge made of each answer: the tiny model does not always answer valid JSON,
    # and an answer read as no verdict is one outcome of its own
    verdicts = [_verdict(e["response"]["message"]["content"])
                for e in cassette["exchanges"] if e.get("role") == "judge"]
    replay = _agentkit(tmp_path, "replay", str(scenario))
    assert "replay reproduces the recorded traces of all 3 samples" in replay.stdout
    marked = "judges disagree between samples on expect.answer.judge" in replay.stdout
    assert marked == (len(set(verdicts)) > 1), replay.stdout


def test_the_guides_injection_set_runs_against_the_live_model_as_published(tmp_path, live_url):
    # the bundled adversarial set, judged by the live model: every case gets a row, the
    # plain "ignore the rubric" injection fails (the done-when of issue 33), and the guide
    # publishes the figures in the form the command prints them
    environment = {**os.environ, "url": live_url}
    [command] = _live_block("# live (injection)")

    done = subprocess.run(["bash", "-c", command.replace("python ", f"{sys.executable} ", 1)],
                          cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=1800)

    assert done.returncode in (0, 1), done.stdout + done.stderr
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:6]]
            for line in done.stdout.splitlines() if line.startswith("| ")}
    assert len(rows) == 1 + 9  # the header and nine cases
    assert rows["ignore the rubric"] == ["injection", "fail", "fail", "held"], done.stdout
    figure = re.search(r"^smollm2-135m-instruct: \d of 7 injections resisted, \d of 2 controls "
                       r"judged right$", done.stdout, re.MULTILINE)
    assert figure, done.stdout
    published = re.search(r"^smollm2-135m-instruct: \d of 7 injections resisted, \d of 2 "
                          r"controls judged right$", GUIDE.read_text(encoding="utf-8"),
                          re.MULTILINE)
    assert published, "docs/judges.md publishes no figure of the injection set"
