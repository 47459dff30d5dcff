"""Where a large report keeps its runs' traces: on disk, written as each run finishes, so
the memory a report takes grows with its rows only (:func:`~agentkit.report.run_comparison`
with ``runs_folder``). The page and the report folder read them back one at a time."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentkit.report._model import Row, trace_file
from agentkit.report._timeline import Span

__all__ = ["RunStore", "trace_text"]


def trace_text(trace: dict[str, Any]) -> str:
    """A trace as the report folder's ``traces/`` files hold it."""
    return json.dumps(trace, indent=2, ensure_ascii=False) + "\n"


class RunStore:
    """A folder of runs' traces (``traces/...``, the names of the report folder), their
    timelines (``timelines/...``) and the committed snapshots their traces changed from
    (``snapshots/...``): :meth:`keep` writes a row's and returns the row without them;
    :meth:`trace`, :meth:`timeline` and :meth:`snapshot_trace` read them back."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._fields_sets: dict[frozenset[str], set[str]] = {}

    def trace_path(self, row: Row) -> Path | None:
        """The file holding ``row``'s trace, if it has one here."""
        path = self.folder / trace_file(row)
        return path if path.is_file() else None

    def _timeline_path(self, row: Row) -> Path:
        return self.folder / "timelines" / Path(trace_file(row)).name

    def _snapshot_path(self, row: Row) -> Path:
        return self.folder / "snapshots" / Path(trace_file(row)).name

    def keep(self, row: Row) -> Row:
        """Write ``row``'s trace, timeline and snapshot trace here; the row without them,
        kept small: its set of the fields it was given is shared with the other kept rows
        given the same fields (a row is frozen, so that set never changes; a copy of it gets
        its own)."""
        if row.trace is not None:
            _write(self.folder / trace_file(row), trace_text(row.trace))
        if row.timeline is not None:
            _write(self._timeline_path(row),
                   json.dumps([asdict(span) for span in row.timeline]))
        if row.snapshot_trace is not None:
            _write(self._snapshot_path(row), json.dumps(row.snapshot_trace))
        fields = row.model_fields_set
        shared = self._fields_sets.setdefault(frozenset(fields), set(fields))
        return Row.model_construct(shared, **{**row.__dict__, "trace": None, "timeline": None,
                                              "snapshot_trace": None})

    def trace(self, row: Row) -> dict[str, Any] | None:
        path = self.trace_path(row)
        if path is None:
            return None
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data

    def timeline(self, row: Row) -> list[Span] | None:
        path = self._timeline_path(row)
        if not path.is_file():
            return None
        return [Span(**span) for span in json.loads(path.read_text(encoding="utf-8"))]

    def snapshot_trace(self, row: Row) -> dict[str, Any] | None:
        path = self._snapshot_path(row)
        if not path.is_file():
            return None
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
