"""The labels file of an LLM judge's rubric, ``judges/<name>.labels.yaml``: transcripts with
the verdict people gave them, which :func:`agentkit.quality.calibrate` asks the judge about.

```yaml
rubric: states the order's refund amount and promises no date
subject: answer            # or conversation (default: answer)
model: gpt-4o-mini         # the judge's model (default: whichever recorded the cassette)
samples: 3                 # the judge is asked this many times per item (default 1)
min_kappa: 0.6             # the floor under which reports call the judge uncalibrated
criteria:                  # parts of the rubric people labelled apart (optional)
  amount: states the refund amount
  no_date: promises no date
items:
  - id: exact-amount
    transcript:
      - user: How much will I get back for order A-1001?
        tools: [{name: lookup_order, args: {order: A-1001}, output: "42.50 EUR"}]
        assistant: You get 42.50 EUR back.
    verdict: pass
    criteria: {amount: pass, no_date: pass}
```

A file that is not such a labels file is a :class:`LabelsError` listing every problem at its
line (a verdict that is not ``pass`` or ``fail``, an id given twice, a criterion the file
does not define)."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentkit.core.errors import BadInputError, one_line
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, YamlLocations, parse_yaml

__all__ = ["LabelsError", "Labels", "LabelledItem", "LabelledTurn", "LabelledCall",
           "load_labels", "LABELS_SUFFIX", "DEFAULT_MIN_KAPPA", "cassette_of"]

LABELS_SUFFIX = ".labels.yaml"
DEFAULT_MIN_KAPPA = 0.6
"""The floor of a labels file without ``min_kappa``: below it, agreement with people is at
best moderate (Landis & Koch call 0.61-0.80 substantial)."""

Verdict = Literal["pass", "fail"]


class LabelsError(BadInputError):
    """A judge's labels file that cannot be read as one; every problem at its line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class LabelledCall(_Strict):
    """One tool call of a labelled transcript, as the judge reads it."""

    name: str = Field(min_length=1)
    args: dict[str, Any] = {}
    output: str = ""
    failed: bool = False

    @property
    def is_error(self) -> bool:
        return self.failed


class LabelledTurn(_Strict):
    """One turn of a labelled transcript: the user's message, the tool calls, the answer."""

    user: str
    tools: list[LabelledCall] = []
    assistant: str | None = None

    @property
    def tool_calls(self) -> list[LabelledCall]:
        return self.tools

    @property
    def response(self) -> str | None:
        return self.assistant

    @property
    def error(self) -> str | None:
        return None


class LabelledItem(_Strict):
    """A transcript and the verdict people gave it (and each criterion's, when labelled)."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    transcript: list[LabelledTurn] = Field(min_length=1)
    verdict: Verdict
    criteria: dict[str, Verdict] = {}
    note: str | None = None


class Labels(_Strict):
    """A labels file: the rubric, how its judge is asked, and the labelled items. ``path``
    and ``lines`` (each item's line) are set by :func:`load_labels`."""

    rubric: str = Field(min_length=1)
    subject: Literal["answer", "conversation"] = "answer"
    model: str | None = None
    samples: int = Field(default=1, ge=1, le=20)
    min_kappa: float | None = Field(default=None, ge=-1, le=1)
    criteria: dict[str, str] = {}
    items: list[LabelledItem] = Field(min_length=1)
    path: Path = Field(default=Path("<labels>"), exclude=True)
    lines: dict[str, int] = Field(default={}, exclude=True)

    @property
    def name(self) -> str:
        """The file's name without ``.labels.yaml``."""
        return self.path.name.removesuffix(LABELS_SUFFIX)

    @property
    def floor(self) -> float:
        return DEFAULT_MIN_KAPPA if self.min_kappa is None else self.min_kappa

    def where(self, item: LabelledItem) -> str:
        """``file:line`` of ``item``."""
        return f"{self.path}:{self.lines.get(item.id, 1)}"


def cassette_of(path: Path) -> Path:
    """The judge's recording of a labels file: ``<name>.cassette.yaml`` beside it."""
    return path.with_name(path.name.removesuffix(LABELS_SUFFIX) + ".cassette.yaml")


def load_labels(path: str | Path) -> Labels:
    """The labels file at ``path``, checked; a :class:`LabelsError` naming every problem at
    its line otherwise."""
    path = Path(path)
    if not path.name.endswith(LABELS_SUFFIX) or path.name == LABELS_SUFFIX:
        raise LabelsError(f"{path}: a judge's labels file is named <rubric>{LABELS_SUFFIX} "
                          "(its recording is <rubric>.cassette.yaml beside it)")
    try:
        data, where = parse_yaml(read_text(path))
    except YamlError as exc:
        raise LabelsError(f"{path}{exc.where}: {exc.problem}") from None
    except TextFileError as exc:
        raise LabelsError(str(exc)) from None
    except OSError as exc:
        raise LabelsError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise LabelsError(f"{path}:1: a labels file is a mapping with `rubric` and `items` "
                          f"(docs/suite-quality.md), got {type(data).__name__}")
    problems = [(line, f"{path}:{line}: {'.'.join(map(str, key))}: duplicate key `{key[-1]}` "
                       f"(first at line {first}); remove one")
                for key, line, first in where.duplicates]
    labels = None
    try:
        labels = Labels.model_validate(data)
    except ValidationError as exc:
        problems += _described(path, exc, where)
    if labels is not None:
        problems += _crossed(path, labels, where)
    if problems:
        lines = dict.fromkeys(one_line(text) for _, text in sorted(problems, key=lambda p: p[0]))
        raise LabelsError("\n".join(lines))
    assert labels is not None
    lines = {item.id: where.line(("items", index)) for index, item in enumerate(labels.items)}
    return labels.model_copy(update={"path": path, "lines": lines})


def _crossed(path: Path, labels: Labels, where: YamlLocations) -> list[tuple[int, str]]:
    """What no one field shows: an id given twice, a criterion the file does not define."""
    problems = []
    seen: dict[str, int] = {}
    for index, item in enumerate(labels.items):
        line = where.line(("items", index, "id"))
        if item.id in seen:
            problems.append((line, f"{path}:{line}: items.{index}.id: the id {item.id!r} is "
                                   f"given twice (first at line {seen[item.id]}); each item "
                                   "needs its own (the recording keys the judge's answers by "
                                   "it)"))
        seen.setdefault(item.id, line)
        for name in item.criteria:
            if name not in labels.criteria:
                line = where.line(("items", index, "criteria", name), key=True)
                known = sorted(labels.criteria)
                close = difflib.get_close_matches(name, known, n=1)
                hint = (f"did you mean `{close[0]}`?" if close else
                        f"the file defines {', '.join(f'`{k}`' for k in known)}" if known
                        else "the file defines none under `criteria:`")
                problems.append((line, f"{path}:{line}: items.{index}.criteria.{name}: not a "
                                       f"criterion of this file; {hint}"))
    for name, rubric in labels.criteria.items():
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]*", name) or not rubric.strip():
            line = where.line(("criteria", name))
            problems.append((line, f"{path}:{line}: criteria.{name}: a criterion is a name "
                                   "(letters, digits, _ and -) and a non-empty rubric"))
    if not labels.rubric.strip():
        line = where.line(("rubric",))
        problems.append((line, f"{path}:{line}: rubric: the rubric is empty"))
    return problems


def _described(path: Path, error: ValidationError,
               where: YamlLocations) -> list[tuple[int, str]]:
    found = []
    for item in error.errors():
        loc = tuple(item["loc"])
        dotted = ".".join(map(str, loc)) or "(top level)"
        line = where.line(loc)
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            known = _known_fields(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            message = (f"unknown field `{loc[-1]}`; "
                       + (f"did you mean `{close[0]}`?" if close
                          else f"known fields here: {', '.join(known)}"))
        elif "input" in item and item["type"] != "missing":
            shown = repr(item["input"])
            message += f", got {shown if len(shown) <= 60 else shown[:57] + '...'}"
        found.append((line, f"{path}:{line}: {dotted}: {message}"))
    return found


def _known_fields(loc: tuple[Any, ...]) -> list[str]:
    """The fields of the mapping at ``loc`` (for "did you mean")."""
    model: type[BaseModel] = Labels
    parts = [p for p in loc if isinstance(p, str)]
    nested: dict[str, type[BaseModel]] = {"items": LabelledItem, "transcript": LabelledTurn,
                                          "tools": LabelledCall}
    for part in parts:
        model = nested.get(part, model)
    return sorted(name for name in model.model_fields if name not in ("path", "lines"))
