"""docs/reliability.md names the test behind each guarantee: every one it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOC = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
TEST_SOURCES = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py"))


def test_every_test_file_the_reliability_doc_names_exists():
    files = set(re.findall(r"`(tests/[\w/]+\.py)", DOC))

    assert files and sorted(f for f in files if not (ROOT / f).is_file()) == []


def test_every_test_function_the_reliability_doc_names_exists():
    names = set(re.findall(r"`(?:tests/[\w/]+\.py)?(?:::)?(test_\w+)", DOC))

    assert len(names) > 30
    assert sorted(n for n in names if not re.search(rf"def {n}\(", TEST_SOURCES)) == []


def test_the_readme_links_the_reliability_doc():
    assert "(docs/reliability.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
