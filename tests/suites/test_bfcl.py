"""``agentkit suite bfcl`` on small hand-written cases in BFCL's data format (tests/suites/
bfcl_data): one scenario per case, runnable offline under the agent types, scored as BFCL's
AST checker scores calls; malformed data is a located error. The real data: test_bfcl_data.py
(the ``suites`` lane)."""

from __future__ import annotations

import contextlib
import io
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.cli import main
from agentkit.recording import dump_yaml
from agentkit.scenario import load_scenario
from agentkit.suites import bfcl
from tests.suites._scoring import agentkit_passes

DATA = Path(__file__).parent / "bfcl_data"
AGENT_TYPES = "react,function_calling,function_agent,react_agent"


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out=out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def written(tmp_path: Path) -> Path:
    code, out, _ = _cli("suite", "bfcl", "--data", str(DATA), "--out", str(tmp_path / "bfcl"))
    assert code == 0, out
    return tmp_path / "bfcl"


def test_one_scenario_per_case_under_its_category(written: Path):
    files = sorted(str(p.relative_to(written)) for p in written.rglob("*.yaml"))

    assert files == ["irrelevance/irrelevance_0.yaml", "multiple/multiple_0.yaml",
                     "parallel/parallel_0.yaml", "parallel_multiple/parallel_multiple_0.yaml",
                     "simple/simple_python_0.yaml", "simple/simple_python_1.yaml",
                     "simple/simple_python_2.yaml"]
    assert load_scenario(written / "simple" / "simple_python_0.yaml").tags == ["bfcl", "simple"]


def test_the_command_says_how_many_it_wrote_per_category(tmp_path: Path):
    code, out, _ = _cli("suite", "bfcl", "--data", str(DATA), "--out", str(tmp_path),
                        "--categories", "simple,parallel", "--limit", "1")

    assert code == 0
    assert out == f"wrote 2 scenarios to {tmp_path} (simple 1, parallel 1)\n"


def test_every_case_passes_offline_under_four_agent_types(written: Path):
    code, out, _ = _cli("run", "--snapshots", "off", "--agents", AGENT_TYPES, str(written))

    assert code == 0, out
    assert out.splitlines()[-1] == "28 passed, 0 failed"


def test_tools_are_told_bfcls_functions_with_json_schema_types(written: Path):
    data = yaml.safe_load((written / "parallel_multiple" / "parallel_multiple_0.yaml").read_text())
    tools = {tool["name"]: tool for tool in data["tools"]}

    assert sorted(tools) == ["math_round", "stats_mean"]  # dots are underscores, as for OpenAI
    assert tools["math_round"]["ref"] == "agentkit.suites.bfcl:stand_in"
    number = tools["math_round"]["parameters"]["properties"]["number"]
    assert (number["type"], number["format"]) == ("number", "float")
    assert tools["stats_mean"]["parameters"]["properties"]["numbers"]["items"]["type"] == "number"
    assert tools["stats_mean"]["parameters"]["type"] == "object"
    booking = yaml.safe_load((written / "simple" / "simple_python_1.yaml").read_text())
    assert booking["tools"][0]["parameters"]["properties"]["party"]["type"] == "object"


def test_scenarios_are_written_as_every_scenario_writer_writes_yaml(tmp_path: Path):
    data = _broken_copy(tmp_path)
    path = data / "BFCL_v4_simple_python.json"
    first, *rest = path.read_text().splitlines(keepends=True)
    path.write_text(first.replace("How far is 3 miles in kilometres?",
                                  "How far is 3 miles\\nin kilometres?", 1) + "".join(rest))
    case = next(bfcl.read_cases(data, "simple"))

    code, _, _ = _cli("suite", "bfcl", "--data", str(data), "--out", str(tmp_path / "out"),
                      "--categories", "simple", "--limit", "1")

    written = (tmp_path / "out" / "simple" / "simple_python_0.yaml").read_text()
    assert code == 0 and written == dump_yaml(bfcl.scenario_data(case))
    assert "turns:\n- user: |-\n    How far is 3 miles\n    in kilometres?\n" in written
    assert load_scenario(tmp_path / "out" / "simple" / "simple_python_0.yaml").turns[0].user == (
        "How far is 3 miles\nin kilometres?")


def test_a_system_message_of_the_question_is_history(written: Path):
    scenario = load_scenario(written / "parallel" / "parallel_0.yaml")

    assert [(m.role, m.content) for m in scenario.history] == [
        ("system", "You are a travel assistant.")]
    assert scenario.turns[0].user == "What time is it in Oslo and in Lima?"


def test_the_trajectory_is_the_first_possible_answer(written: Path):
    data = yaml.safe_load((written / "parallel" / "parallel_0.yaml").read_text())

    assert data["trajectory"] == [
        {"parallel": [{"call": "local_time", "args": {"city": "Oslo", "format": "24h"}},
                      {"call": "local_time", "args": {"city": "Lima", "format": "24h"}}]},
        {"answer": "Done."}]


CONVERT = "simple/simple_python_0.yaml"
BOOK = "simple/simple_python_1.yaml"
PRIME = "simple/simple_python_2.yaml"
BOILING = "multiple/multiple_0.yaml"
TIMES = "parallel/parallel_0.yaml"
MEAN = "parallel_multiple/parallel_multiple_0.yaml"
NOTHING = "irrelevance/irrelevance_0.yaml"

RIGHT: list[tuple[str, list[dict[str, Any]]]] = [
    (CONVERT, [{"units_convert_distance": {"value": 3.0, "from_unit": "miles",
                                           "to_unit": "kilometers"}}]),
    # an integer for a float; another possible answer, loosely written; an optional argument
    (CONVERT, [{"units_convert_distance": {"value": 3, "from_unit": "MI.",
                                           "to_unit": "Kilo-metres", "precision": 2}}]),
    (BOOK, [{"book_table": {"restaurant": "luigi's", "party": {"adults": 2, "children": 1},
                            "time": "7:00 pm", "notes": []}}]),
    (BOILING, [{"chemistry_boiling_point": {"substance": "H2O", "scale": "Fahrenheit"}}]),
    (PRIME, [{"is_prime": {"number": 97, "explain": True}}]),
    (TIMES, [{"local_time": {"city": "Lima, Peru"}}, {"local_time": {"city": "Oslo"}}]),
    (MEAN, [{"math_round": {"number": 7.25, "digits": 1}},
            {"stats_mean": {"numbers": [2.0, 4.0, 9.0]}}]),
    (NOTHING, []),
]

WRONG: list[tuple[str, list[dict[str, Any]]]] = [
    (CONVERT, [{"units_convert_distance": {"value": 5.0, "from_unit": "miles",
                                           "to_unit": "km"}}]),           # a wrong value
    (CONVERT, [{"units_convert_distance": {"value": 3.0, "to_unit": "km"}}]),  # missing required
    (CONVERT, [{"units_convert_distance": {"value": 3.0, "from_unit": "miles", "to_unit": "km",
                                           "rounding": "up"}}]),          # an unknown argument
    (CONVERT, [{"units_convert_distance": {"value": "3", "from_unit": "miles",
                                           "to_unit": "km"}}]),           # a text for a number
    (CONVERT, [{"units_convert_distance": {"value": 3.0, "from_unit": "miles", "to_unit": "km"}},
               {"units_convert_distance": {"value": 3.0, "from_unit": "miles",
                                           "to_unit": "km"}}]),           # an extra call
    (CONVERT, []),                                                        # no call
    (BOOK, [{"book_table": {"restaurant": "Luigi's", "party": {"adults": 2},
                            "time": "7pm"}}]),                            # a dict's key missing
    (BOOK, [{"book_table": {"restaurant": "Luigi's", "party": {"adults": 2, "children": True},
                            "time": "7pm"}}]),                            # true is no 1
    (BOILING, [{"chemistry_melting_point": {"substance": "water"}}]),    # the wrong function
    # required by the function, though the answer lists "" (BFCL checks required ones first)
    (PRIME, [{"is_prime": {"number": 97}}]),
    # a parameter the function does not have, though the answer lists it
    (PRIME, [{"is_prime": {"number": 97, "explain": True, "verbose": True}}]),
    (TIMES, [{"local_time": {"city": "Oslo"}}]),                          # a call missing
    (MEAN, [{"math_round": {"number": 7.25, "digits": 1}},
            {"stats_mean": {"numbers": [2, 4, 9]}}]),                     # integers in a float list
    (NOTHING, [{"geometry_circle_area": {"radius": 1.0}}]),               # a call where none fits
]


@pytest.mark.parametrize(("case", "calls"), RIGHT)
def test_the_expectations_pass_every_possible_answer(written: Path, tmp_path: Path, case: str,
                                                     calls: list[dict[str, Any]]):
    assert agentkit_passes(written / case, calls, tmp_path)


@pytest.mark.parametrize(("case", "calls"), WRONG)
def test_the_expectations_fail_what_bfcl_fails(written: Path, tmp_path: Path, case: str,
                                               calls: list[dict[str, Any]]):
    assert not agentkit_passes(written / case, calls, tmp_path)


def _broken_copy(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    return data


def test_a_broken_json_line_is_an_error_at_its_file_and_line(tmp_path: Path):
    data = _broken_copy(tmp_path)
    path = data / "BFCL_v4_multiple.json"
    path.write_text(path.read_text() + '{"id": "multiple_1", "question": [[\n')

    code, _, err = _cli("suite", "bfcl", "--data", str(data), "--out", str(tmp_path / "out"))

    assert code == 2
    assert f"{path}:2: not a JSON object" in err


def test_a_case_without_a_possible_answer_is_an_error_at_its_line(tmp_path: Path):
    data = _broken_copy(tmp_path)
    (data / "possible_answer" / "BFCL_v4_parallel.json").write_text("")

    code, _, err = _cli("suite", "bfcl", "--data", str(data), "--out", str(tmp_path / "out"),
                        "--categories", "parallel")

    assert code == 2
    assert f"{data / 'BFCL_v4_parallel.json'}:1: case parallel_0 has no possible answer" in err


def test_a_missing_data_file_is_named(tmp_path: Path):
    data = _broken_copy(tmp_path)
    (data / "BFCL_v4_irrelevance.json").unlink()

    code, _, err = _cli("suite", "bfcl", "--data", str(data), "--out", str(tmp_path / "out"))

    assert code == 2
    assert f"{data / 'BFCL_v4_irrelevance.json'}: no such file" in err


def test_an_unknown_category_is_a_usage_error_listing_the_categories(tmp_path: Path):
    code, _, err = _cli("suite", "bfcl", "--categories", "simple,live_simple", "--out",
                        str(tmp_path))

    assert code == 2
    assert ("unknown category live_simple; choose from simple, multiple, parallel, "
            "parallel_multiple, irrelevance") in err


def test_without_bfcl_eval_installed_it_says_how_to_get_the_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def not_installed(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(bfcl.metadata, "distribution", not_installed)

    code, _, err = _cli("suite", "bfcl", "--out", str(tmp_path))

    assert code == 2
    assert "pip install --no-deps 'bfcl-eval>=2026.3'" in err
    assert not list(tmp_path.iterdir())
