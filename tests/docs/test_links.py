"""Every relative link of README.md and the docs/ pages resolves: the file exists, and an
anchor names a heading of the page it points to (as GitHub makes anchors of headings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, pages

_LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCED = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCED.sub("", page.read_text(encoding="utf-8"))
    return {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def links(page: Path) -> list[str]:
    return [target for target in _LINK.findall(_CODE.sub("", page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_of_the_page_resolves(page: Path):
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{target}: no heading with the anchor #{fragment}")

    assert broken == []


def test_the_anchor_of_a_heading_is_githubs():
    assert anchor("Record a plain test: per-test cassettes") == "record-a-plain-test-per-test-cassettes"
    assert anchor("Departures from LlamaIndex 0.12") == "departures-from-llamaindex-012"
    assert anchor("The `agentkit` command") == "the-agentkit-command"


def test_every_docs_page_is_listed_in_the_index():
    index = (ROOT / "docs" / "README.md")
    listed = {(index.parent / target.partition("#")[0]).resolve() for target in links(index)}

    assert sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")
                  if p != index and p.resolve() not in listed) == []
