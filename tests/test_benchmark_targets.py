"""benchmarks/targets.py: the README's table of every target's last three figures, made from
fixed results (nothing is timed here)."""

import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_targets", BENCHMARKS / "targets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


targets = _load()
measure = sys.modules["_measure"]


def _results(path: Path, *entries: tuple[str, str, bool, str]) -> Path:
    path.write_text("".join(json.dumps({"target": t, "figure": f, "met": m, "at": at,
                                        "load": 1.5}) + "\n" for t, f, m, at in entries))
    return path


def _readme(path: Path) -> Path:
    path.write_text(f"# Benchmarks\n\nabove\n\n{targets.BEGIN}\nold table\n{targets.END}\n\n"
                    "below\n")
    return path


def _row(text: str, claim_start: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| {claim_start}"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_table_shows_each_targets_last_three_figures_newest_first(tmp_path):
    results = _results(tmp_path / "results.jsonl",
                       *[("bridge_sdk_1", f"1.{n}0x", False, f"2026-11-2{n} 10:00")
                         for n in range(1, 6)],
                       ("scenarios_replay", "1.80 ms CPU", True, "2026-11-29 20:00"))
    readme = _readme(tmp_path / "README.md")

    assert targets.main(["--results", str(results), "--readme", str(readme)],
                        out=io.StringIO()) == 0

    text = readme.read_text()
    assert _row(text, "openai-SDK agent, 1 tool call") == [
        targets.TARGETS["bridge_sdk_1"][1], "`bench_bridge.py`",
        "1.50x **missed** (2026-11-25 10:00 UTC, load 1.5)",
        "1.40x **missed** (2026-11-24 10:00 UTC, load 1.5)",
        "1.30x **missed** (2026-11-23 10:00 UTC, load 1.5)"]
    assert _row(text, "a scenario replay")[2:] == [
        "1.80 ms CPU met (2026-11-29 20:00 UTC, load 1.5)", "-", "-"]
    # every target has its row, whether measured yet or not
    assert text.count("\n| ") == len(targets.TARGETS) + 2
    assert text.startswith("# Benchmarks\n\nabove\n\n") and text.endswith("\n\nbelow\n")
    assert "old table" not in text


def test_a_second_run_leaves_the_readme_as_it_is(tmp_path):
    results = _results(tmp_path / "results.jsonl", ("mutate", "61 mutants", True, "2026-11-29"))
    readme = _readme(tmp_path / "README.md")
    args = ["--results", str(results), "--readme", str(readme)]
    targets.main(args, out=io.StringIO())
    out = io.StringIO()

    targets.main(args, out=out)

    assert "already up to date" in out.getvalue()


def test_add_records_a_figure_measured_by_hand(tmp_path):
    results, readme = tmp_path / "results.jsonl", _readme(tmp_path / "README.md")

    targets.main(["--results", str(results), "--readme", str(readme),
                  "--add", "test_suite", "1m58s", "met"], out=io.StringIO())

    entry = json.loads(results.read_text())
    assert (entry["target"], entry["figure"], entry["met"]) == ("test_suite", "1m58s", True)
    assert "1m58s met" in readme.read_text()


def test_record_appends_whole_lines_to_what_is_there(tmp_path):
    path = _results(tmp_path / "results.jsonl", ("mutate", "61 mutants", True, "2026-11-29"))

    measure.record([measure.Measured("scenarios_60s", "3.1 ms", True),
                    measure.Measured("scenarios_replay", "8.90 ms CPU", False)], path)

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(e["target"], e["met"]) for e in lines] == [
        ("mutate", True), ("scenarios_60s", True), ("scenarios_replay", False)]
    assert all("at" in e and "load" in e for e in lines)


def test_publish_appends_the_figures_and_rewrites_the_table_with_them(tmp_path):
    results, readme = tmp_path / "results.jsonl", _readme(tmp_path / "README.md")

    targets.publish([measure.Measured("bridge_sdk_10", "1.12x", False)], results, readme)

    assert json.loads(results.read_text())["figure"] == "1.12x"
    assert _row(readme.read_text(), "openai-SDK agent, 10 tool calls")[2].startswith(
        "1.12x **missed**")


@pytest.mark.parametrize(("line", "problem"), [
    ('{"target": "nope", "figure": "1x", "met": true, "at": "x"}', "unknown target 'nope'"),
    ("not json", "not a JSON line"),
    ('{"target": "mutate"}', "a result needs target, figure, met and at"),
])
def test_a_bad_results_line_is_an_error_naming_its_line(tmp_path, capsys, line, problem):
    results = tmp_path / "results.jsonl"
    results.write_text('{"target": "mutate", "figure": "1", "met": true, "at": "x"}\n'
                       f"{line}\n")
    readme = _readme(tmp_path / "README.md")
    before = readme.read_text()

    assert targets.main(["--results", str(results), "--readme", str(readme)]) == 1

    assert f"{results}:2: {problem}" in capsys.readouterr().err
    assert readme.read_text() == before


def test_a_readme_without_the_markers_is_refused(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# no table here\n")

    assert targets.main(["--results", str(tmp_path / "none.jsonl"),
                         "--readme", str(readme)]) == 1

    assert "needs one line" in capsys.readouterr().err
    assert readme.read_text() == "# no table here\n"


def test_the_committed_table_is_the_one_the_committed_results_make():
    text = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    table = text.split(targets.BEGIN + "\n", 1)[1].split("\n" + targets.END, 1)[0]

    assert table == targets.render(targets.read_results(BENCHMARKS / "results.jsonl"))
