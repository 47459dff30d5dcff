"""The report page as a browser shows it: headless Chromium loads it with no script or console
error and no request beyond the file itself (it is self-contained), every section and table
is there, every SVG is drawn with a size, and the timelines' bars have a width.

Skipped only when Chromium is not installed; ``.ci/run`` installs it and sets
``AGENTKIT_CHROMIUM_REQUIRED=1``, which turns a missing browser into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.report import run_comparison, write_report

from .chromium import Chromium, Page, chromium_path
from .conftest import SCENARIOS

# a browser in a process of its own: the slow lane runs it (.ci/run, with Chromium required)
pytestmark = pytest.mark.slow

EXAMPLE = SCENARIOS.parent / "reports" / "example" / "report.html"


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    executable = chromium_path()
    if executable is None:
        if os.environ.get("AGENTKIT_CHROMIUM_REQUIRED"):
            pytest.fail("AGENTKIT_CHROMIUM_REQUIRED is set but Chromium is not installed "
                        "(apt-get install -y chromium)")
        pytest.skip("Chromium is not installed (apt-get install -y chromium); .ci/run "
                    "installs it so CI checks the page")
    with Chromium(executable) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def regressed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of parallel look-ups and a CoA chain against a baseline with faster tools:
    regressions, trace diffs and overlapping calls on its timelines."""
    root = tmp_path_factory.mktemp("regressed")
    names = ("parallel_lookups.yaml", "coa_long_chain.yaml", "multi_turn_memory.yaml")
    old, new = root / "old", root / "new"
    for folder, latency in ((old, "1.0"), (new, "1.5")):
        folder.mkdir()
        for name in names:
            text = (SCENARIOS / name).read_text(encoding="utf-8")
            (folder / name).write_text(text.replace("latency: 1.0}", f"latency: {latency}}}"),
                                       encoding="utf-8")
    baseline = write_report(run_comparison(old), root / "old-report")["json"]
    return write_report(run_comparison(new), root / "new-report", baseline=baseline)["html"]


def _sizes(page: Page, selector: str) -> list[list[float]]:
    return page.evaluate(f"""[...document.querySelectorAll({selector!r})].map(e => {{
        const box = e.getBoundingClientRect(); return [box.width, box.height]; }})""")


@pytest.mark.parametrize("report", ["example", "regressed"])
def test_the_page_loads_without_errors_or_outside_requests(browser, regressed, report):
    path = EXAMPLE if report == "example" else regressed

    page = browser.open(path)

    assert page.errors == []
    assert page.requests == [path.resolve().as_uri()]


@pytest.mark.parametrize("report", ["example", "regressed"])
def test_every_svg_is_drawn_with_a_size(browser, regressed, report):
    page = browser.open(EXAMPLE if report == "example" else regressed)

    sizes = _sizes(page, "svg")

    assert len(sizes) > 6
    assert all(width > 100 and height > 20 for width, height in sizes), sizes


def test_the_example_has_its_sections_and_a_run_section_per_table_row(browser):
    page = browser.open(EXAMPLE)

    headings = page.evaluate("[...document.querySelectorAll('h2')].map(h => h.textContent)")
    rows = page.evaluate("document.querySelectorAll('table')[4].tBodies[0].rows.length")
    runs = page.evaluate("document.querySelectorAll('section.run').length")
    assert headings[:10] == ["Needs attention", "By tag", "Which is best", "Pair by pair",
                            "Summary by agent type", "Charts", "Scenarios × agent types",
                            "Workflows", "Resumed runs", "Failures"] and headings[-1] == "Runs"
    assert runs == rows > 0


def test_every_link_of_the_page_reaches_a_section_that_is_shown(browser):
    page = browser.open(EXAMPLE)

    missing = page.evaluate("""[...document.querySelectorAll('a[href^="#"]')]
        .map(a => a.getAttribute('href').slice(1))
        .filter(id => { const t = document.getElementById(id);
                        return !t || t.getBoundingClientRect().height === 0; })""")

    assert missing == []


def test_overlapping_calls_are_drawn_in_separate_lanes_over_the_same_time(browser, regressed):
    page = browser.open(regressed)

    bars = page.evaluate("""[...document.querySelectorAll(
            '#run-parallel_lookups-llm_compiler svg.timeline g.call.tool rect')]
        .map(r => { const b = r.getBoundingClientRect(); return [b.x, b.y, b.width]; })""")

    assert len(bars) == 4
    assert len({round(x) for x, _, _ in bars}) == 1 and len({round(y) for _, y, _ in bars}) == 4
    assert all(width > 100 for _, _, width in bars)


def test_regressions_and_trace_diffs_are_on_the_page(browser, regressed):
    page = browser.open(regressed)

    regressions = page.evaluate("[...document.querySelectorAll('ul.attention li')].filter("
                                "li => li.querySelector('.b-regression'))"
                                ".map(li => li.querySelector('a').textContent)")
    diff = page.evaluate("document.querySelector('#run-parallel_lookups-react pre.diff')"
                         ".textContent")
    assert "parallel_lookups[react]" in regressions
    assert len(regressions) == len(set(regressions))  # each regressed run once
    assert "also in: tool_calls[0] (population).latency of steps 2-4" in diff


def test_the_changed_values_of_a_trace_diff_are_coloured(browser, regressed):
    page = browser.open(regressed)

    colours = page.evaluate("""['diff-old', 'diff-new'].map(name => getComputedStyle(
        document.querySelector('#run-parallel_lookups-react pre.diff .' + name)).color)""")

    assert colours == ["rgb(179, 38, 30)", "rgb(17, 99, 41)"]


def test_the_browser_check_catches_a_script_error_and_a_request_for_another_file(
        browser, tmp_path):
    page_file = tmp_path / "bad.html"
    page_file.write_text('<!DOCTYPE html><html><body><img src="elsewhere.png">'
                         '<script>throw new Error("boom")</script></body></html>',
                         encoding="utf-8")

    page = browser.open(page_file)

    assert any("Error: boom" in error for error in page.errors)
    assert page.requests == [page_file.as_uri(), (tmp_path / "elsewhere.png").as_uri()]
