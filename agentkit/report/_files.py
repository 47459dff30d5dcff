"""A report read back (``report.json`` and the traces beside it, e.g. a baseline) and the
reports of a run's shards merged into the whole run's; the details of a shard's page that
``report.json`` does not hold (:data:`SHARD_FILE`); the sha256 of each file of a shard's report
(:data:`CHECKSUM_FILE`), checked before a merge reads any of them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentkit.core.textfiles import TextFileError, json_locations, parse_json, read_text
from agentkit.quality import merged_coverage
from agentkit.report._model import Comparison, ReportError, trace_file
from agentkit.report._timeline import Span
from agentkit.trace import TraceError, check_trace

__all__ = ["load_comparison", "merge_shards", "shard_details", "SHARD_FILE", "CHECKSUM_FILE",
           "checksums"]


def _read_json(path: Path, what: str) -> tuple[Any, str]:
    try:
        text = read_text(path)
        return parse_json(path, text), text
    except OSError as exc:
        raise ReportError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except TextFileError as exc:
        raise ReportError(str(exc)) from None


def load_comparison(path: str | Path) -> Comparison:
    """Read a ``report.json`` (e.g. a baseline) and the traces beside it (``traces/``, where
    the report has them: a run without one is compared by its numbers only); errors name the
    file, line and field."""
    path = Path(path)
    data, text = _read_json(path, "report")
    try:
        comparison = Comparison.from_dict(data, source=str(path))
    except ReportError:  # again, with the lines of the fields
        comparison = Comparison.from_dict(data, source=str(path), where=json_locations(text))
    if comparison.shard is not None:
        _check_sums(path.parent, path.name)
    kept = _shard_details(path.parent / SHARD_FILE) if comparison.shard is not None else {}
    rows = []
    for row in comparison.rows:
        file = path.parent / trace_file(row)
        if row.has_metrics and file.is_file():
            trace_data, trace_text = _read_json(file, "trace")
            try:
                if isinstance(trace_data, dict) and isinstance(trace_data.get("samples"), list):
                    for sample in trace_data["samples"]:  # a sampled case's traces
                        check_trace(sample, str(file))
                    trace = trace_data
                else:
                    trace = check_trace(trace_data, str(file), json_locations(trace_text))
            except TraceError as exc:
                raise ReportError(str(exc)) from None
            row = row.model_copy(update={"trace": trace, **kept.get(row.key, {})})
        rows.append(row)
    return comparison.model_copy(update={"rows": rows})


#: In a shard's report folder: what its page shows that report.json does not hold (each
#: run's timeline, the stored snapshot a changed trace is diffed with), so that a merge
#: renders the page of the whole run exactly.
SHARD_FILE = "shard.json"


def shard_details(comparison: Comparison) -> str:
    """The :data:`SHARD_FILE` of a shard's report."""
    details: dict[str, Any] = {}
    for kept in comparison.rows:
        row = comparison.with_trace(kept)
        found: dict[str, Any] = {}
        if row.timeline is not None:
            found["timeline"] = [asdict(span) for span in row.timeline]
        if row.snapshot_trace is not None:
            found["snapshot_trace"] = row.snapshot_trace
        if found:
            details[row.key] = found
    return json.dumps(details, indent=1, ensure_ascii=False) + "\n"


#: In a shard's report folder: the sha256 of every other file of the report, one
#: ``<hex>  <path>`` line each (what ``sha256sum -c`` checks), so that a merge never joins a
#: shard whose files changed after it wrote them -- a damaged copy, an edited number.
CHECKSUM_FILE = "SHA256SUMS"


def checksums(files: Mapping[str, str | Path]) -> str:
    """The :data:`CHECKSUM_FILE` of a report folder written with ``files`` (name -> text, or
    the file holding it)."""
    return "".join(f"{_sha256(text)}  {name}\n" for name, text in sorted(files.items()))


def _sha256(text: str | Path) -> str:
    if isinstance(text, str):
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    with open(text, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _check_sums(folder: Path, report: str) -> None:
    """Every file :data:`CHECKSUM_FILE` lists in ``folder`` has the sha256 listed, and the
    files a merge reads (``report``, :data:`SHARD_FILE`, the traces) are all listed."""
    sums = folder / CHECKSUM_FILE
    try:
        text = read_text(sums)
    except FileNotFoundError:
        raise ReportError(f"{sums}: no such file: a shard's report lists its files' sha256 "
                          "there; write the shard's report again with this agentkit") from None
    except OSError as exc:
        raise ReportError(f"{sums}: cannot read it: {exc.strerror or exc}") from None
    except TextFileError as exc:
        raise ReportError(str(exc)) from None
    listed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        digest, _, name = line.partition("  ")
        parts = Path(name).parts
        if (len(digest) != 64 or not name or Path(name).is_absolute() or ".." in parts
                or any(c not in "0123456789abcdef" for c in digest)):
            raise ReportError(f"{sums}:{number}: not a `<sha256>  <file>` line of this "
                              f"folder: {line[:200]!r}")
        listed[Path(name).as_posix()] = digest
    read = [report, *([SHARD_FILE] if (folder / SHARD_FILE).exists() else []),
            *(f"traces/{p.name}" for p in sorted((folder / "traces").glob("*.json")))]
    unlisted = [name for name in read if name not in listed]
    if unlisted:
        raise ReportError(f"{folder / unlisted[0]}: not listed in {sums}, so not a file its "
                          "shard's report wrote; write the shard's report again")
    for name, digest in listed.items():
        try:
            with open(folder / name, "rb") as file:
                found = hashlib.file_digest(file, "sha256").hexdigest()
        except OSError as exc:
            raise ReportError(f"{folder / name}: listed in {sums} but cannot be read: "
                              f"{exc.strerror or exc}") from None
        if found != digest:
            raise ReportError(f"{folder / name}: changed since its shard's report was written "
                              f"(its sha256 is not the one in {sums}); write the shard's "
                              "report again")


def _shard_details(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    data, _ = _read_json(path, "shard details")
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not the details of a shard's report (a JSON object)")
    try:
        return {key: {"timeline": [Span(**span) for span in value.get("timeline") or []]
                      if "timeline" in value else None,
                      "snapshot_trace": value.get("snapshot_trace")}
                for key, value in data.items()}
    except (TypeError, AttributeError) as exc:
        raise ReportError(f"{path}: not the details of a shard's report: {exc}") from None


def merge_shards(shards: list[Comparison], sources: list[str]) -> Comparison:
    """The report of the whole run from the reports of its shards (each written with
    ``--shard i/n``; ``sources`` name them for errors): their rows in the whole run's order,
    exactly what the run unsplit would have reported. Every shard of the same run must be
    there, once."""
    if not shards:
        raise ReportError("--merge: give the report folders of the shards")
    first = shards[0]
    for comparison, source in zip(shards, sources, strict=True):
        if comparison.shard is None:
            raise ReportError(f"{source}: not the report of a shard (it was written without "
                              "--shard i/n)")
        if (comparison.plan, comparison.shard[1], comparison.agent_types, comparison.models) \
                != (first.plan, first.shard[1] if first.shard else 0, first.agent_types,
                    first.models):
            raise ReportError(f"{source}: a shard of another run than {sources[0]} (its "
                              "scenarios, agent types, models or shard count differ)")
    count = first.shard[1] if first.shard else 0
    seen = sorted(c.shard[0] for c in shards if c.shard is not None)
    if seen != list(range(1, count + 1)):
        missing = sorted(set(range(1, count + 1)) - set(seen))
        twice = sorted({i for i in seen if seen.count(i) > 1})
        what = (f"shard(s) {', '.join(map(str, missing))} of {count} missing" if missing
                else f"shard(s) {', '.join(map(str, twice))} given twice")
        raise ReportError(f"--merge: {what}; merge every shard of the run once")
    rows = {row.key: row for comparison in shards for row in comparison.rows}
    absent = [key for key in first.plan if key not in rows]
    if absent:
        raise ReportError(f"--merge: no shard holds {', '.join(absent[:3])}"
                          + (f" and {len(absent) - 3} more" if len(absent) > 3 else ""))
    diagrams = {name: diagram for comparison in shards
                for name, diagram in comparison.diagrams.items()}
    return Comparison(agentkit_version=first.agentkit_version, agent_types=first.agent_types,
                      models=first.models, rows=[rows[key] for key in first.plan],
                      diagrams={n: diagrams[n] for n in first.agent_types if n in diagrams},
                      coverage=merged_coverage([c.coverage for c in shards]))
