"""docs/suites.md: its commands run, in order, against the hand-written BFCL cases installed
where the real ones would be (a ``bfcl-eval`` distribution on the import path); the agent
module and pyproject table it shows are the ones written; the scenario it shows is what the
command writes for the case."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.docs.pages import DOCS, ROOT, Shell

# the page's BFCL section (AgentDojo's is run by tests/suites/test_agentdojo_lane.py)
DOC = (DOCS / "suites.md").read_text(encoding="utf-8").split("\n## BFCL\n", 1)[1].split(
    "\n## AgentDojo\n", 1)[0]
DATA = Path(__file__).parent / "bfcl_data"


def install_fake_bfcl_eval(site: Path) -> None:
    """A ``bfcl-eval`` distribution in ``site`` holding the hand-written cases as its data."""
    shutil.copytree(DATA, site / "bfcl_eval" / "data")
    info = site / "bfcl_eval-2026.3.23.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bfcl-eval\nVersion: 2026.3.23\n")
    files = sorted(str(p.relative_to(site)) for p in (site / "bfcl_eval").rglob("*.json"))
    (info / "RECORD").write_text("".join(f"{name},,\n" for name in files))


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    install_fake_bfcl_eval(site)
    monkeypatch.syspath_prepend(str(site))


@pytest.mark.slow  # a docs page's commands in a fresh project
def test_every_command_of_the_page_runs(installed: None, shell: Shell) -> None:
    (shell.folder / "pyproject.toml").write_text(
        re.search(r"```toml\n# pyproject.toml\n(.*?)```", DOC, re.DOTALL).group(1))
    (shell.folder / "my_agent.py").write_text(
        re.search(r"```python\n# my_agent.py\n(.*?)```", DOC, re.DOTALL).group(1))
    outputs, ran = [], 0
    for block in re.findall(r"```bash\n(.*?)```", DOC, flags=re.DOTALL):
        for command in filter(str.strip, block.splitlines()):
            if command.startswith("pip install"):
                # CI's suites lane installs the same distribution the same way (no network here)
                assert "--no-deps 'bfcl-eval>=2026.3'" in command
                assert "--no-deps \"bfcl-eval>=2026.3\"" in (ROOT / ".ci" / "run").read_text()
                continue
            code, output = shell(command)
            assert code == 0, f"{command}\n{output}"
            outputs.append(output)
            ran += 1

    assert ran == 5
    assert outputs[0].startswith("wrote 7 scenarios to suites/bfcl (simple 3, multiple 1, "
                                 "parallel 1, parallel_multiple 1, irrelevance 1)")
    assert "parallel_0  (suites/bfcl/parallel/parallel_0.yaml)  [bfcl, parallel]" in outputs[1]
    assert outputs[2].splitlines()[-1] == "28 passed, 0 failed"
    report = (shell.folder / "reports" / "bfcl" / "report.md").read_text()
    assert re.search(r"^\| parallel +\|( +1/1 \|){4}$", report, flags=re.M), report
    assert outputs[4].splitlines()[-1] == "3 passed, 0 failed"


def test_the_scenario_shown_is_what_the_command_writes(installed: None, shell: Shell) -> None:
    code, output = shell("agentkit suite bfcl --out suites/bfcl --categories parallel")
    assert code == 0, output
    written = yaml.safe_load(
        (shell.folder / "suites" / "bfcl" / "parallel" / "parallel_0.yaml").read_text())
    shown = yaml.safe_load(re.findall(r"```yaml\n(.*?)```", DOC, flags=re.DOTALL)[0])

    assert shown == {key: written[key] for key in shown}
