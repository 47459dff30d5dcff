"""Every page of the documentation that shows shell commands has a test that runs them: the
test named here for the page exists and reads the page. (A new page with commands is added
here with its test.)"""

from __future__ import annotations

import pytest

from tests.docs.pages import ROOT, fenced, pages

#: page -> the tests that run its ```bash blocks (the offline ones in the default run, the
#: rest in the lanes .ci/run runs after it: slow, frameworks, mcp, otel, live)
RUN_BY = {
    "README.md": [".ci/run", "tests/test_ci_commands.py", "tests/docs/test_readme.py"],
    "docs/bridge.md": ["tests/bridge/test_serve.py", "tests/live/test_served_live.py"],
    "docs/evaluation.md": ["tests/eval/test_evaluation_doc.py", "tests/live/test_evaluation_live.py"],
    "docs/faults.md": ["tests/faults/test_faults_doc.py", "tests/live/test_faults_live.py"],
    "docs/integrations.md": ["tests/integrations/test_integrations_doc.py"],
    "docs/judges.md": ["tests/docs/test_judges_doc.py", "tests/live/test_judges_live.py"],
    "docs/mcp.md": ["tests/mcp_tools/test_mcp_doc.py",
                    "tests/mcp_conformance/test_mcp_conformance.py"],
    "docs/otel.md": ["tests/otel/test_otel_doc.py", "tests/phoenix/test_phoenix_lane.py"],
    "docs/pytest.md": ["tests/docs/test_guides.py"],
    "docs/recording.md": ["tests/live/test_recording_live.py"],
    "docs/reliability.md": ["tests/docs/test_reliability_doc.py"],
    "docs/suite-quality.md": ["tests/quality/test_suite_quality_doc.py"],
    "docs/suites.md": ["tests/suites/test_agentdojo_lane.py", "tests/suites/test_suites_doc.py"],
    "docs/workflows.md": ["tests/docs/test_workflows_doc.py"],
    "docs/world-state.md": ["tests/docs/test_world_state_doc.py"],
    "docs/your-agent.md": ["tests/docs/test_guides.py"],
    "examples/retail_desk/README.md": ["tests/retail_desk/test_retail_desk_commands.py",
                                       "tests/live/test_retail_desk_live.py"],
}


def _with_commands() -> list[str]:
    return sorted(str(page.relative_to(ROOT)) for page in pages()
                  if fenced(page.read_text(encoding="utf-8"), "bash"))


def test_every_page_with_commands_names_the_tests_that_run_them():
    assert _with_commands() == sorted(RUN_BY)


@pytest.mark.parametrize("page", sorted(RUN_BY))
def test_the_tests_named_for_a_page_exist_and_read_it(page: str):
    for test in RUN_BY[page]:
        text = (ROOT / test).read_text(encoding="utf-8")
        named = page if page == "README.md" else page.removeprefix("docs/")
        assert named in text or f"{named.removesuffix('.md')}_doc" in text, (
            f"{test} does not read {page}")
