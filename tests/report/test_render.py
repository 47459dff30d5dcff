"""Rendering: Markdown tables, JSON, a self-contained HTML page, written atomically."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from agentkit.report import (
    ReportError,
    load_comparison,
    render_html,
    render_json,
    render_markdown,
    run_comparison,
    verdict_sentence,
    write_report,
)
from agentkit.report._model import trace_file
from agentkit.report._render import CHART_TITLES, RATE_CHART_TITLES
from agentkit.report._standings import head_to_head
from agentkit.trace._diff import diff_traces

from .conftest import AGENT_TYPES, SCENARIOS, make_comparison, make_row, passing_scenario

_VOID = {"meta", "br", "hr", "img", "input", "link", "wbr"}


class _PageChecker(HTMLParser):
    """Records tag nesting errors, SVG count, external references, scripts, in-page links and
    ids."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.svgs = 0
        self.references: list[str] = []
        self.scripts = 0
        self.links: list[str] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag, attrs):
        self._attrs(tag, attrs)
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._attrs(tag, attrs)

    def _attrs(self, tag, attrs):
        self.svgs += tag == "svg"
        self.scripts += tag == "script"
        self.references += [f"{tag} {name}={value}" for name, value in attrs
                            if name in ("src", "href", "xlink:href")
                            and not (value or "").startswith("#")]
        self.links += [value[1:] for name, value in attrs
                       if name == "href" and (value or "").startswith("#")]
        self.ids += [value for name, value in attrs if name == "id"]

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def _check(page: str) -> _PageChecker:
    checker = _PageChecker()
    checker.feed(page)
    checker.close()
    return checker


@pytest.fixture
def failing(write_scenario):
    write_scenario("ok.yaml", passing_scenario("ok"))
    write_scenario("bad.yaml", passing_scenario("bad", answer="<script>alert(1)</script>"))
    write_scenario("broken.yaml", "format: 1\nname: broken\nturns: [\n")
    return run_comparison(write_scenario("zz.yaml", passing_scenario("zz")).parent)


def test_write_report_writes_markdown_json_and_html(bundled, tmp_path):
    paths = write_report(bundled, tmp_path / "out")

    assert {k: p.name for k, p in paths.items()} == {
        "markdown": "report.md", "json": "report.json", "html": "report.html",
        "summary": "summary.md"}
    assert all(p.read_text(encoding="utf-8") for p in paths.values())


@pytest.mark.slow  # the bundled comparison, twice
def test_two_runs_give_byte_identical_files(bundled, tmp_path):
    outputs = []
    # the first run is the session's (the same call, made earlier in this process)
    for name, comparison in (("one", bundled), ("two", run_comparison(SCENARIOS, AGENT_TYPES))):
        paths = write_report(comparison, tmp_path / name, baseline=comparison)
        outputs.append({kind: path.read_bytes() for kind, path in paths.items()})

    assert outputs[0] == outputs[1]


def test_write_report_reads_a_baseline_path(bundled, tmp_path):
    baseline = write_report(make_comparison(make_row("slow_tools", "react")), tmp_path / "b")

    paths = write_report(bundled, tmp_path / "out", baseline=baseline["json"])

    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    first = bundled.rows[0]
    assert data["baseline"]["new"][0] == f"{first.scenario}[{first.agent_type}]"


def test_json_report_is_the_comparison_plus_the_baseline_section(bundled):
    data = json.loads(render_json(bundled, bundled))

    assert {k: v for k, v in data.items() if k not in ("baseline", "head_to_head")} == \
        bundled.to_dict()
    assert data["head_to_head"] == {"verdict": verdict_sentence(bundled),
                                    **head_to_head(bundled).to_dict()}
    assert data["baseline"]["has_regressions"] is False


def test_markdown_has_a_summary_table_with_a_line_per_compared_agent_type(bundled):
    text = render_markdown(bundled)
    summary = text.split("## Summary by agent type")[1].split("##")[0]

    assert "| Agent type " in summary
    for agent_type, _ in bundled.compared().contenders:
        assert sum(line.startswith(f"| {agent_type} ") for line in summary.splitlines()) == 1
    shared = len(bundled.compared().scenarios)
    assert f"Over the {shared} scenario{'' if shared == 1 else 's'} every compared agent type " \
        "ran" in summary


def test_markdown_names_an_agent_type_left_out_of_the_comparison_and_why(lone_react):
    best = render_markdown(lone_react).split("## Which is best")[1].split("\n## ")[0]

    assert "react is left out: it ran 1 scenario, none of them run by all the others." in best


def test_markdown_has_a_scenario_table_with_a_line_per_row(bundled):
    table = render_markdown(bundled).split("## Scenarios × agent types")[1].split("##")[0]
    lines = [line for line in table.splitlines() if line.startswith("| ")][1:]

    assert [[c.strip() for c in line.split("|")[1:3]] for line in lines] == [
        [r.scenario, r.agent_type] for r in bundled.rows]


def test_markdown_has_delta_columns_against_a_baseline():
    current = make_comparison(make_row("a", steps=4))
    baseline = make_comparison(make_row("a", steps=3))

    header, _, row = render_markdown(current, baseline).split(
        "## Scenarios × agent types")[1].strip().splitlines()[2:5]

    cells = [c.strip() for c in header.split("|")]
    values = [c.strip() for c in row.split("|")]
    assert values[cells.index("Δ steps")] == "+1"
    assert values[cells.index("Δ LLM")] == "·"


def test_markdown_lists_failures_with_their_problems(failing):
    failures = render_markdown(failing).split("## Failures")[1]

    assert "### bad[function_calling]: FAIL" in failures
    assert "<script>alert(1)</script>" in failures
    assert "### broken: ERROR" in failures and "invalid YAML" in failures


def test_markdown_lists_regressions_against_a_baseline():
    text = render_markdown(make_comparison(make_row("a", status="fail")),
                           make_comparison(make_row("a")))

    assert ("- **Regression** `a[react]`: passed in the baseline; fails now: the answer was "
            "wrong") in text


def test_html_is_well_formed_with_an_svg_per_chart_and_per_timed_run(bundled):
    checker = _check(render_html(bundled, bundled))

    page = render_html(bundled, bundled)
    drawn = [title for title in (*RATE_CHART_TITLES, *CHART_TITLES)
             if f"<figcaption>{title}</figcaption>" in page]
    timed = [r for r in bundled.rows if (r.wall_time or 0) > 0 and not r.sampled]
    assert (checker.errors, checker.stack) == ([], [])
    assert set(CHART_TITLES) <= set(drawn)
    assert checker.svgs == len(drawn) + len(timed)


def test_html_has_no_scripts_or_external_references(failing):
    checker = _check(render_html(failing, failing))

    assert (checker.scripts, checker.references) == (0, [])


def test_html_escapes_text_from_problems(failing):
    page = render_html(failing)

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def _shared_by_several(comparison):
    return [s for s in comparison.scenarios
            if sum(r.scenario == s and r.agent_type is not None for r in comparison.rows) > 1]


def test_html_charts_show_the_scenarios_several_agent_types_ran_and_no_other(bundled):
    page = render_html(bundled)
    steps_chart = page.split("<figcaption>Steps</figcaption>")[1].split("</svg>")[0]
    several = _shared_by_several(bundled)

    assert several and all(f">{name}</text>" in steps_chart for name in several)
    alone = [s for s in bundled.scenarios if s not in several]
    assert alone and not any(f">{name}</text>" in steps_chart for name in alone)
    assert f"{len(alone)} scenarios run by one agent type only are in the table" in page


def test_html_charts_have_no_empty_slots_a_group_has_a_bar_per_agent_type_that_ran_it():
    comparison = make_comparison(make_row("a", "react"), make_row("a", "coa"),
                                 make_row("b", "react"), make_row("b", "llm_compiler"))
    steps_chart = render_html(comparison).split("<figcaption>Steps</figcaption>")[1]
    steps_chart = steps_chart.split("</svg>")[0]

    assert steps_chart.count("<rect x=") - steps_chart.count('class="band"') \
        - len(comparison.agent_types) == 4  # 4 bars (and a swatch per agent type)
    assert "—" not in steps_chart


def test_html_marks_error_rows_in_charts_and_tables():
    comparison = make_comparison(make_row("a", "react"), make_row("a", "coa", status="error"))
    page = render_html(comparison)

    # every chart but "Tool errors" (all its bars are zero: not drawn), and the pass rates
    assert page.count('class="value fail">error</text>') == len(CHART_TITLES)
    assert "<figcaption>Tool errors</figcaption>" not in page
    assert '<span class="badge b-error">error</span>' in page


def test_html_shows_deltas_and_regressions_against_a_baseline():
    current = make_comparison(make_row("a", status="fail", steps=4), make_row("b"))
    baseline = make_comparison(make_row("a", steps=3), make_row("b"))

    page = render_html(current, baseline)

    assert '<span class="d worse">Δ +1</span>' in page
    assert '<span class="badge b-regression">regression</span>' in page
    assert "<li>passed in the baseline; fails now: the answer was wrong</li>" in page
    assert "<li>steps 3 → 4 (+1, +33%; allowed: +10% or +0, whichever is more)</li>" in page


def test_html_without_a_baseline_has_no_delta_marks(bundled):
    assert 'class="d' not in render_html(bundled)


def test_the_committed_example_report_is_the_report_of_the_bundled_scenarios(bundled):
    example = SCENARIOS.parent / "reports" / "example"
    for name, text in (("report.json", render_json(bundled)),
                       ("report.md", render_markdown(bundled)),
                       ("report.html", render_html(bundled))):
        assert (example / name).read_text(encoding="utf-8") == text, (
            f"reports/example/{name} is stale; regenerate it with: agentkit report --agents "
            f"{','.join(AGENT_TYPES)} --out reports/example")
    traces = {p.relative_to(example).as_posix(): json.loads(p.read_text(encoding="utf-8"))
              for p in (example / "traces").iterdir()}
    assert traces == {trace_file(r): r.trace for r in bundled.rows if r.trace is not None}, (
        "reports/example/traces is stale; regenerate the example report")


def test_markdown_lists_a_removed_passing_row_as_a_regression():
    current, baseline = make_comparison(make_row("a")), make_comparison(make_row("a"), make_row("b"))

    text = render_markdown(current, baseline)

    assert "- **Regression** `b[react]`: passed in the baseline; missing now" in text


def test_markdown_escapes_problem_text_outside_code_blocks():
    current = make_comparison(make_row("a", status="fail").model_copy(
        update={"problems": ["answer lacks <b>x</b> | *y*"]}))

    text = render_markdown(current, make_comparison(make_row("a")))

    assert r"fails now: answer lacks \<b\>x\</b\> \| \*y\*" in text


def test_empty_scenario_directory_gives_an_empty_but_valid_report(tmp_path):
    comparison = run_comparison(tmp_path)

    paths = write_report(comparison, tmp_path / "out")

    assert "0 scenarios · 0 runs" in paths["markdown"].read_text(encoding="utf-8")
    checker = _check(paths["html"].read_text(encoding="utf-8"))
    assert (checker.errors, checker.svgs) == ([], 0)


def test_the_html_page_embeds_the_workflow_diagram_once_per_distinct_workflow(bundled):
    page = render_html(bundled)
    assert page.count('<pre class="mermaid">') == 1
    assert "<p>Workflow of function_agent, react_agent, agent_workflow:</p>" in page
    assert "step_aggregate_tool_results --&gt;|AgentInput| step_setup_agent" in page
    assert "<script" not in page


def test_markdown_has_the_workflow_diagram_as_a_mermaid_block(bundled):
    text = render_markdown(bundled)
    assert "## Workflows" in text and "```mermaid\nflowchart TD\n" in text


def test_a_report_without_workflow_agent_types_has_no_workflows_section():
    comparison = make_comparison(make_row("a"))
    assert "Workflows" not in render_html(comparison)
    assert "diagrams" not in render_json(comparison)


def test_write_report_into_a_file_is_a_report_error_and_leaves_the_file(bundled, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# keep me", encoding="utf-8")

    with pytest.raises(ReportError, match=r"README\.md: is a file, not a folder"):
        write_report(bundled, readme)

    assert readme.read_text(encoding="utf-8") == "# keep me"


def test_write_report_into_a_folder_that_is_not_a_report_is_a_report_error_and_leaves_it(
        bundled, tmp_path):
    (tmp_path / "mine" / "traces").mkdir(parents=True)
    (tmp_path / "mine" / "traces" / "keep.json").write_text("{}", encoding="utf-8")

    with pytest.raises(ReportError, match=r"mine: is a folder with other files and no "
                                          r"\.agentkit-report file"):
        write_report(bundled, tmp_path / "mine")

    assert [p.name for p in (tmp_path / "mine" / "traces").iterdir()] == ["keep.json"]


@pytest.mark.slow  # the bundled comparison, written
def test_write_report_leaves_no_temporary_files_beside_or_in_the_folder(bundled, tmp_path):
    write_report(bundled, tmp_path / "out")
    write_report(bundled, tmp_path / "out")

    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == \
        [".agentkit-report", "report.html", "report.json", "report.md", "summary.md", "traces"]


# ----------------------------------------------------------------- traces and runs
def test_write_report_keeps_each_runs_trace_beside_the_report(bundled, tmp_path):
    write_report(bundled, tmp_path / "out")

    row = bundled.rows[0]
    stored = tmp_path / "out" / "traces" / f"{row.scenario}.{row.agent_type}.json"
    assert json.loads(stored.read_text(encoding="utf-8")) == row.trace


def test_a_rewritten_report_drops_the_traces_of_runs_it_no_longer_has(bundled, tmp_path):
    write_report(bundled, tmp_path / "out")
    fewer = bundled.model_copy(update={"rows": bundled.rows[:1]})

    write_report(fewer, tmp_path / "out")

    assert len(list((tmp_path / "out" / "traces").iterdir())) == 1


def test_a_baseline_is_read_with_the_traces_beside_it(bundled, tmp_path):
    paths = write_report(bundled, tmp_path / "out")

    baseline = load_comparison(paths["json"])

    assert [r.trace for r in baseline.rows] == [r.trace for r in bundled.rows]


def test_a_malformed_baseline_trace_is_a_report_error_naming_the_file(bundled, tmp_path):
    paths = write_report(bundled, tmp_path / "out")
    row = bundled.rows[0]
    broken = tmp_path / "out" / "traces" / f"{row.scenario}.{row.agent_type}.json"
    broken.write_text('{"turns": 3}', encoding="utf-8")

    with pytest.raises(ReportError, match=rf"^{re.escape(str(broken))}:1: turns: "):
        load_comparison(paths["json"])


def test_every_link_of_the_page_leads_to_a_section_of_it(bundled):
    checker = _check(render_html(bundled, bundled))

    assert checker.links and set(checker.links) <= set(checker.ids)
    assert len(checker.ids) == len(set(checker.ids))


def test_each_run_has_a_section_with_its_steps_and_the_table_links_to_it(bundled):
    page = render_html(bundled)
    section = page.split('<section class="run" id="run-single_tool_call-react">')[1]
    section = section.split("</section>")[0]

    assert '<a class="run-link" href="#run-single_tool_call-react">react</a>' in page
    assert "<h4>Steps</h4>" in section
    assert "add({&quot;a&quot;: 2, &quot;b&quot;: 3}) → &quot;5&quot;" in section


def test_a_run_with_simulated_time_shows_its_timeline_and_one_without_says_why(bundled):
    page = render_html(bundled)
    slow = page.split('id="run-slow_tools-function_calling"')[1].split("</section>")[0]
    instant = page.split('id="run-shared_state-function_agent"')[1].split("</section>")[0]

    assert 'class="chart timeline"' in slow and "<title>turn 1, step 1: population" in slow
    assert "No simulated time passed" in instant and "<svg" not in instant


def test_a_run_section_shows_how_its_trace_differs_from_the_baselines(bundled):
    baseline = bundled.model_copy(update={"rows": [
        r.model_copy(update={"trace": _answered(r.trace, "five")}) if r.key == "single_tool_call[react]"
        else r for r in bundled.rows]})

    page = render_html(bundled, baseline)
    section = page.split('id="run-single_tool_call-react"')[1].split("</section>")[0]
    same = page.split('id="run-single_tool_call-function_calling"')[1].split("</section>")[0]

    assert "Trace against the baseline: changed" in section
    assert ('response: <span class="diff-old">&quot;five&quot;</span> -&gt; '
            '<span class="diff-new">&quot;2 + 3 = 5&quot;</span>') in section
    assert "Trace against the baseline: the same" in same


def test_a_baseline_without_traces_is_compared_by_its_numbers_only(bundled):
    bare = bundled.model_copy(update={"rows": [r.model_copy(update={"trace": None})
                                               for r in bundled.rows]})

    page = render_html(bundled, bare)

    assert page.count("Trace against the baseline: not compared") == len(bundled.rows)


def _answered(trace, answer):
    changed = json.loads(json.dumps(trace))
    changed["turns"][0]["response"] = answer
    return changed


def test_snapshot_changes_are_listed_with_their_diff(write_scenario):
    path = write_scenario("snap.yaml", passing_scenario("snap"))
    comparison = run_comparison(path)
    row = comparison.rows[0].model_copy(update={
        "snapshot": "changed", "snapshot_diff": ['turn 1 ("What is 2 + 3?"):', "    response"]})
    comparison = comparison.model_copy(update={"rows": [row]})

    markdown = render_markdown(comparison).split("## Snapshot changes")[1]
    html = render_html(comparison).split("<h2>Snapshot changes</h2>")[1]

    assert "### snap[function_calling]: the trace differs from its committed snapshot" in markdown
    assert 'turn 1 ("What is 2 + 3?"):\n    response' in markdown
    assert '<a class="run-link" href="#run-snap-function_calling">snap[function_calling]</a>' \
        in html


def test_the_page_marks_the_changed_words_of_a_snapshot_diff_in_elements_with_a_class(bundled):
    row = next(r for r in bundled.rows if r.key == "single_tool_call[react]")
    stored = json.loads(json.dumps(row.trace))
    # the system prompt, written once (the next request refers to it)
    message = stored["turns"][0]["steps"][0]["llm_calls"][0]["messages"][0]
    message["content"] = message["content"].replace("a capable", "a <careful> & capable")
    changed = row.model_copy(update={"snapshot": "changed", "snapshot_trace": stored,
                                     "snapshot_diff": diff_traces(stored, row.trace)})
    page = render_html(bundled.model_copy(update={"rows": [changed]}))
    section = page.split('id="run-single_tool_call-react"')[1].split("</section>")[0]

    assert ('~You are a<del class="diff-del"> &lt;careful&gt; &amp;</del> capable assistant.'
            in section)
    assert "also in: next request" in section


def test_no_snapshot_section_when_every_trace_is_its_snapshot(bundled):
    assert "Snapshot changes" not in render_markdown(bundled)
    assert "Snapshot changes" not in render_html(bundled)


def test_markdown_lists_every_cost_regression_with_its_numbers():
    current = make_comparison(make_row("a", steps=5, wall_time=3.0))

    text = render_markdown(current, make_comparison(make_row("a", steps=3, wall_time=1.0)))

    assert "Against the baseline: 1 regression (1 in cost)" in text
    assert ("- **Regression** `a[react]`: steps 3 → 5 (+2, +67%; allowed: +10% or +0, "
            "whichever is more); wall time 1.00s → 3.00s (+2.00s, +200%; allowed: +10% or "
            "+0.25s, whichever is more)") in text


def test_numbers_have_one_format_in_every_table():
    text = render_markdown(make_comparison(make_row("a", wall_time=6.32919, serial_time=1)))

    assert "6.33s" in text and "1.00s" in text and "6.32919" not in text


def test_a_run_whose_baseline_trace_is_its_snapshot_shows_that_diff_once():
    before = json.loads((SCENARIOS.parent / "reports" / "example" / "traces" /
                         "single_tool_call.react.json").read_text(encoding="utf-8"))
    after = json.loads(json.dumps(before))
    after["turns"][0]["user"] = "What is 2 + 4?"
    row = make_row("single_tool_call", "react")
    current = make_comparison(row.model_copy(update={"snapshot": "changed",
                                                     "snapshot_trace": before, "trace": after}))
    baseline = make_comparison(row.model_copy(update={"trace": before}))

    section = render_html(current, baseline).split('id="run-single_tool_call-react"')[1]

    assert section.count('<pre class="diff">') == 1
    assert ("Trace against its committed snapshot and the baseline's (the same trace): "
            "changed") in section
