"""Render a comparison as Markdown (:mod:`._markdown`: the report and a pull-request
summary), JSON and one self-contained HTML page (:mod:`._html`), and write a report's folder.

Every renderer is a pure function of the comparison (and the optional baseline), so the same
runs give byte-identical files; the two renderers share their wording (:mod:`._wording`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentkit.core.files import FolderRefused, replace_folder
from agentkit.report._files import (
    CHECKSUM_FILE,
    SHARD_FILE,
    checksums,
    load_comparison,
    shard_details,
)
from agentkit.report._html import CHART_TITLES, RATE_CHART_TITLES, html_page, render_html
from agentkit.report._markdown import markdown_pieces, render_markdown, render_summary
from agentkit.report._model import Comparison, ReportError, trace_file
from agentkit.report._standings import HeadToHead, head_to_head
from agentkit.report._store import trace_text
from agentkit.report._suites import agentdojo_json, agentdojo_scores
from agentkit.report._wording import baseline_diff, undecided_text, verdict

__all__ = ["render_markdown", "render_json", "json_pieces", "render_html", "render_summary", "write_report",
           "verdict_sentence", "undecided_text",
           "REPORT_FILES", "REPORT_MARKER", "CHART_TITLES", "RATE_CHART_TITLES"]

REPORT_FILES = {"markdown": "report.md", "json": "report.json", "html": "report.html",
                "summary": "summary.md"}
#: The file that marks a folder as a report's: only such a folder (or an empty or missing one)
#: is replaced by the next report, so a user's folder given by mistake is never emptied.
REPORT_MARKER = ".agentkit-report"
_MARKER_TEXT = ("This folder is an agentkit report. `agentkit report --out` replaces it whole; "
                "without this file it refuses to.\n")


def verdict_sentence(comparison: Comparison) -> str:
    """The report in one sentence, as report.md, the page and the console open with: which
    agent types pass what, the cheapest of those that pass everything (over what each pair
    shares) and where the evidence is too thin, with the samples that would decide it."""
    return verdict(head_to_head(comparison))


def render_json(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """:meth:`Comparison.to_dict`, the head-to-head table, and a ``baseline`` section
    (deltas, regressions) if given."""
    return "".join(json_pieces(comparison, baseline))


_ROWS = object()
"""Where :func:`json_pieces` writes the rows, one at a time."""


def json_pieces(comparison: Comparison, baseline: Comparison | None = None, *,
                table: HeadToHead | None = None) -> Iterator[str]:
    """:func:`render_json`'s text in pieces, a row at a time (what a large report writes to
    its file as it goes instead of holding its rows' JSON whole): the same text as
    ``json.dumps(data, indent=2, ensure_ascii=False)`` of the whole report. ``table``: the
    comparison's head-to-head table if already built (a report builds it once)."""
    data: dict[str, Any] = comparison.dict_around(_ROWS)
    table = table or head_to_head(comparison)
    data["head_to_head"] = {"verdict": verdict(table), **table.to_dict()}
    found = agentdojo_scores(comparison)
    if found:
        data["agentdojo"] = agentdojo_json(found)
    diff = baseline_diff(comparison, baseline)
    if diff is not None:
        data["baseline"] = diff.to_dict()
    yield "{"
    for index, (key, value) in enumerate(data.items()):
        yield f"{',' if index else ''}\n  {_json(key)}: "
        if value is _ROWS:
            yield from _json_rows(comparison)
        else:  # in pieces too: the coverage of a large report has a part per tool
            yield from (piece.replace("\n", "\n  ") for piece in _ENCODER.iterencode(value))
    yield "\n}\n"


_ENCODER = json.JSONEncoder(indent=2, ensure_ascii=False)


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


def _json_rows(comparison: Comparison) -> Iterator[str]:
    """The ``rows`` list of report.json, indented as its second level, a row at a time."""
    if not comparison.rows:
        yield "[]"
        return
    for index, row in enumerate(comparison.rows):
        yield f"{',' if index else '['}\n    " + _json(row.to_dict()).replace("\n", "\n    ")
    yield "\n  ]"


def write_report(comparison: Comparison, out_dir: str | Path,
                 baseline: Comparison | str | Path | None = None) -> dict[str, Path]:
    """Write report.md, report.json, report.html, summary.md (for a pull-request comment)
    and each run's trace
    (``traces/<scenario>.<agent type>.json``, what a later ``--baseline`` diffs against) into
    ``out_dir`` (a shard's report also :data:`SHARD_FILE` and the sha256 of each file,
    :data:`CHECKSUM_FILE`, which a merge checks), all at once
    (:func:`agentkit.core.files.replace_folder`: never a new report.md beside an old
    report.json, even if the process is killed).

    ``out_dir`` is replaced whole, so it must be new, empty or a report's (it holds the
    :data:`REPORT_MARKER` file every report leaves): anything else, or the current folder or
    one holding it, is a :class:`ReportError` and nothing is written. A symlink is written
    through. ``baseline`` is a comparison or the path of a baseline ``report.json``. Returns
    the paths by format: ``{"markdown": ..., "json": ..., "html": ...}``.
    """
    if baseline is not None and not isinstance(baseline, Comparison):
        baseline = load_comparison(baseline)
    out = Path(out_dir)
    store = comparison.runs
    table = head_to_head(comparison)  # once, for every file
    pieces = {"markdown": markdown_pieces(comparison, baseline, table=table),
              "json": json_pieces(comparison, baseline, table=table),
              "html": html_page(comparison, baseline, table=table)}
    texts: dict[str, str | Path] = {}
    for kind, made in pieces.items():
        if store is None:
            texts[kind] = "".join(made)
        else:  # a large report's files, written as they are made beside the runs' traces
            path = texts[kind] = store.folder / REPORT_FILES[kind]
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.writelines(made)
    texts["summary"] = render_summary(comparison, baseline, table=table)
    del table  # not held while the traces are taken in
    files = _ReportFiles({REPORT_MARKER: _MARKER_TEXT,
                          **{REPORT_FILES[kind]: text for kind, text in texts.items()}},
                         comparison)
    if comparison.shard is not None:  # what a merge reads, with the sha256 of each file
        files.after[SHARD_FILE] = shard_details(comparison)
        files.after[CHECKSUM_FILE] = checksums({name: text for name, text in files.items()
                                                if name != REPORT_MARKER})
    try:
        written = replace_folder(out, files, marker=REPORT_MARKER)
    except FolderRefused as exc:
        raise ReportError(f"{out}: {exc}") from None
    return {kind: written / REPORT_FILES[kind] for kind in texts}


class _ReportFiles(Mapping[str, "str | Path"]):
    """A report folder's files (name -> text, or the file holding it): ``before`` (the marker
    and the report's files), then each run's trace (``traces/...``: its text, or its file
    when the comparison keeps its runs on disk), then ``after`` (a shard's files). The
    traces are named as they are iterated, never held: a name and a path per run would grow
    with the rows while the folder is written."""

    def __init__(self, before: dict[str, str | Path], comparison: Comparison) -> None:
        self.before = before
        self.after: dict[str, str | Path] = {}
        self._comparison = comparison

    def _traces(self) -> Iterator[tuple[str, str | Path]]:
        store = self._comparison.runs
        for row in self._comparison.rows:
            kept = store.trace_path(row) if store is not None and row.trace is None else None
            if kept is not None:
                yield trace_file(row), kept
            elif row.trace is not None:
                yield trace_file(row), trace_text(row.trace)

    def items(self) -> Iterator[tuple[str, str | Path]]:  # type: ignore[override]
        yield from self.before.items()
        yield from self._traces()
        yield from self.after.items()

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self.items())

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, name: str) -> str | Path:
        for each, text in self.items():
            if each == name:
                return text
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return name in self.before or name in self.after or any(each == name for each in self)
