"""Calibration of an LLM judge against people: the judge is asked about every transcript of
its labels file (:mod:`._labels`) exactly as a judged expectation asks it -- same prompt,
same strict reading, same votes -- and its verdicts are compared with the people's.

The judge's answers come from its recording, ``<name>.cassette.yaml`` beside the labels
file, keyed as a scenario's judge is (the judge's model, the rubric's hash, the transcript's
hash; ``at`` is the item: ``items.<id>``, ``items.<id>.criteria.<name>``): offline by
default, recorded through a live model on request (``mode``), and a changed rubric, judge
model or transcript is a cassette miss that says which, never a silent re-judgement.

Agreement is Cohen's kappa (:func:`~agentkit.verdict.cohen_kappa`) with a percentile
bootstrap interval over the labelled items (:func:`~agentkit.verdict.kappa_interval`,
seeded), beside the base rates (how often people and the judge say ``pass``), the confusion
counts and, with ``samples`` above 1, self-consistency: the items on which every sample of
the judge gave the same verdict. :func:`judge_calibration` tells a report whether the judge
of a judged expectation is calibrated: its rubric labelled, the same judge model, kappa at
least the floor."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from agentkit.core.errors import BadInputError, HarnessError
from agentkit.harness import RoleSource, judge_messages, parse_verdict, transcript, vote
from agentkit.llms.base import LLM
from agentkit.quality._labels import (
    LABELS_SUFFIX,
    LabelledItem,
    Labels,
    cassette_of,
    load_labels,
)
from agentkit.recording import CassetteError, CassetteLLM, RecordMode, RoleKey, text_hash
from agentkit.scenario.project import find_project
from agentkit.verdict import Judgement, cohen_kappa, kappa_interval
from agentkit.verdict._stats import BOOTSTRAP_RESAMPLES, DEFAULT_CONFIDENCE

__all__ = ["Agreement", "Calibration", "ItemVerdict", "calibrate", "JudgeCalibration",
           "judge_calibration", "labels_in", "CalibrationStatus", "judges_folder",
           "calibration_of"]


@dataclass(frozen=True)
class ItemVerdict:
    """The judge's verdict on one labelled item for one rubric (the file's, or a
    criterion's): each sample's vote (True: pass), and the people's verdict. ``error``: no
    sample gave a verdict the harness reads."""

    item: str
    people: bool
    votes: tuple[bool, ...]
    error: str | None = None

    @property
    def judge(self) -> bool:
        """More votes pass than fail (a tie fails, as a judged expectation's)."""
        return sum(self.votes) > len(self.votes) - sum(self.votes)

    @property
    def consistent(self) -> bool:
        return len(set(self.votes)) <= 1


@dataclass
class Agreement:
    """How the judge agrees with people on one rubric (``name``: ``rubric`` for the file's,
    else the criterion's name)."""

    name: str
    rubric: str
    verdicts: list[ItemVerdict]
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0

    @property
    def pairs(self) -> list[tuple[bool, bool]]:
        """(people, judge) for each item the judge gave a verdict on."""
        return [(v.people, v.judge) for v in self.verdicts if v.error is None]

    @property
    def kappa(self) -> float | None:
        return cohen_kappa(self.pairs)

    @property
    def interval(self) -> tuple[float, float] | None:
        return kappa_interval(self.pairs, self.confidence, seed=self.seed)

    @property
    def unjudged(self) -> list[ItemVerdict]:
        return [v for v in self.verdicts if v.error is not None]

    def confusion(self) -> dict[str, int]:
        """``both_pass``, ``people_only`` (people pass, the judge fails), ``judge_only``
        (the judge passes what people fail), ``both_fail``."""
        pairs = self.pairs
        return {"both_pass": pairs.count((True, True)),
                "people_only": pairs.count((True, False)),
                "judge_only": pairs.count((False, True)),
                "both_fail": pairs.count((False, False))}

    def base_rates(self) -> tuple[int, int, int]:
        """(people's passes, the judge's passes, items) over the items judged."""
        pairs = self.pairs
        return sum(p for p, _ in pairs), sum(j for _, j in pairs), len(pairs)

    def consistency(self) -> tuple[int, int]:
        """(items whose samples all agree, items judged more than once)."""
        many = [v for v in self.verdicts if v.error is None and len(v.votes) > 1]
        return sum(v.consistent for v in many), len(many)

    def to_dict(self) -> dict[str, Any]:
        kappa, interval = self.kappa, self.interval
        people, judge, items = self.base_rates()
        agree, repeated = self.consistency()
        return {"name": self.name, "rubric": self.rubric, "rubric_hash": text_hash(self.rubric),
                "kappa": None if kappa is None else round(kappa, 6),
                "interval": list(interval) if interval is not None else None,
                "items": items, "people_pass": people, "judge_pass": judge,
                "confusion": self.confusion(),
                "self_consistency": {"consistent": agree, "items": repeated},
                "unjudged": {v.item: v.error for v in self.unjudged}}


CalibrationStatus = Literal["calibrated", "below_floor", "undefined"]


@dataclass
class Calibration:
    """A judge's calibration on its labels file: its agreement with people on the file's
    rubric and on each criterion, stamped with the judge's model and the rubric's hash (what
    key the judge's recording)."""

    labels: Labels
    models: list[str]
    """The judge models that answered (as recorded)."""
    overall: Agreement
    criteria: list[Agreement] = field(default_factory=list)
    floor: float = 0.0
    resamples: int = BOOTSTRAP_RESAMPLES

    @property
    def rubric_hash(self) -> str:
        return text_hash(self.labels.rubric)

    @property
    def status(self) -> CalibrationStatus:
        kappa = self.overall.kappa
        if kappa is None:
            return "undefined"
        return "calibrated" if kappa >= self.floor else "below_floor"

    def to_dict(self) -> dict[str, Any]:
        return {"labels": str(self.labels.path), "judge_model": self.models,
                "rubric": self.labels.rubric, "rubric_hash": self.rubric_hash,
                "samples": self.labels.samples, "min_kappa": self.floor,
                "status": self.status, "confidence": self.overall.confidence,
                "interval_method": f"percentile bootstrap over the labelled items, "
                                   f"{self.resamples} resamples, seed {self.overall.seed}",
                "overall": self.overall.to_dict(),
                "criteria": [agreement.to_dict() for agreement in self.criteria]}


def calibrate(path: str | Path, *, live: LLM | None = None, mode: RecordMode = "none",
              min_kappa: float | None = None, confidence: float = DEFAULT_CONFIDENCE,
              seed: int = 0) -> Calibration:
    """Ask the judge of the labels file at ``path`` about each item (from its recording;
    with ``mode`` other than ``none``, recorded through ``live``) and compare its verdicts
    with people's. ``min_kappa`` overrides the file's floor. A malformed file is a
    :class:`~agentkit.quality.LabelsError`; a verdict the recording lacks, a
    :class:`~agentkit.recording.CassetteMissError` saying what changed."""
    labels = load_labels(path)
    recording = cassette_of(labels.path)
    if mode == "none" and not recording.exists():
        raise BadInputError(f"{labels.path}: no recording of its judge ({recording}); record "
                            "one with `agentkit judge calibrate "
                            f"{labels.path} --base-url URL --model MODEL`")
    try:
        channel = (CassetteLLM(recording) if mode == "none"
                   else CassetteLLM(recording, mode, llm=live))
    except CassetteError as exc:
        raise BadInputError(str(exc)) from None
    source = RoleSource("judge", channel=channel, live=live, model=labels.model)
    models: list[str] = []
    rubrics = [("rubric", labels.rubric, None), *((name, rubric, name) for name, rubric
                                                   in labels.criteria.items())]
    found: dict[str, list[ItemVerdict]] = {name: [] for name, _, _ in rubrics}
    for item in labels.items:
        text = transcript(item.transcript)
        for name, rubric, criterion in rubrics:
            people = item.verdict if criterion is None else item.criteria.get(criterion)
            if people is None:
                continue
            at = f"items.{item.id}" + (f".criteria.{criterion}" if criterion else "")
            found[name].append(_ask(source, labels, item, at, rubric, text, people == "pass",
                                    models))
    overall = Agreement("rubric", labels.rubric, found["rubric"], confidence, seed)
    criteria = [Agreement(name, rubric, found[name], confidence, seed)
                for name, rubric, criterion in rubrics if criterion is not None]
    return Calibration(labels, models, overall, criteria,
                       labels.floor if min_kappa is None else min_kappa)


def _ask(source: RoleSource, labels: Labels, item: LabelledItem, at: str, rubric: str,
         text: str, people: bool, models: list[str]) -> ItemVerdict:
    messages = judge_messages(rubric, text, labels.subject)
    key = RoleKey("judge", at, {"rubric": text_hash(rubric)}, text_hash(text),
                  where=labels.where(item))
    votes: list[bool] = []
    for _ in range(labels.samples):
        answer = source.ask(key, messages, {})
        if answer.by not in models:
            models.append(answer.by)
        try:
            parsed = parse_verdict(answer.text)
        except ValueError as exc:
            return ItemVerdict(item.id, people, tuple(votes),
                               f"the judge's answer is not a verdict ({exc}): "
                               f"{answer.text[:80]!r}")
        votes.append(vote(answer.by, parsed, None).passed)
    return ItemVerdict(item.id, people, tuple(votes))


def labels_in(folder: Path) -> list[Path]:
    """The labels files in ``folder`` (sorted; none when it does not exist)."""
    return sorted(folder.glob(f"*{LABELS_SUFFIX}")) if folder.is_dir() else []


@lru_cache(maxsize=64)
def _folder_from(start: Path) -> Path:
    try:
        return find_project(start).root / "judges"
    except HarnessError:  # a broken pyproject.toml: every command says so where it is read
        return start / "judges"


def judges_folder(scenario_path: str | Path | None) -> Path:
    """Where the labels files of a scenario's judges are: ``judges/`` of its project, the
    folder of the nearest pyproject.toml above the scenario file (without one: ``judges/``
    beside the scenario file)."""
    start = Path(scenario_path).resolve().parent if scenario_path else Path.cwd()
    return _folder_from(start)


def calibration_of(judgement: Judgement, scenario_path: str | Path | None) -> JudgeCalibration:
    """Whether the judges that decided ``judgement`` are calibrated on its rubric (the
    labels files of the scenario's project)."""
    judges = list(dict.fromkeys(vote.judge for vote in judgement.votes))
    return judge_calibration(judgement.rubric, judges, judges_folder(scenario_path))


@dataclass(frozen=True)
class JudgeCalibration:
    """Whether the judge of a judged expectation is calibrated (``calibrated``), and if not
    why, in one line for every report."""

    calibrated: bool
    why: str
    labels: str | None = None
    kappa: float | None = None


def judge_calibration(rubric: str, judges: Sequence[str], folder: Path) -> JudgeCalibration:
    """The calibration of a judged expectation's judges (``judges``: who voted -- a model
    name, ``script``) on ``rubric``, from the labels files in ``folder``
    (``judges/`` of the project): uncalibrated when no file labels the rubric, when its
    recording does not replay, when a judge is not the model the recording holds, or when
    kappa is under the file's floor."""
    wanted = text_hash(rubric)
    unread = []
    for path in labels_in(folder):
        found = _calibrated(path, path.stat().st_mtime_ns)
        if isinstance(found, Calibration):
            if found.rubric_hash == wanted:
                return _status(found, [judge for judge in judges if judge])
        elif found[0] == wanted:
            return JudgeCalibration(False, f"uncalibrated: {_shown(path)} does not calibrate "
                                           f"offline: {found[1]}", str(_shown(path)))
        elif found[0] is None:
            unread.append(f"{_shown(path)} does not load: {found[1]}")
    return JudgeCalibration(False, f"uncalibrated: no labels file in {_shown(folder)}/ labels "
                                   "this "
                                   "rubric (agentkit judge calibrate, docs/suite-quality.md)"
                            + (f"; {'; '.join(unread)}" if unread else ""))


def _shown(path: Path) -> Path:
    """``path`` relative to the current folder when below it (reports say the same on every
    machine)."""
    cwd = Path.cwd()
    return path.relative_to(cwd) if path.is_absolute() and path.is_relative_to(cwd) else path


def _status(calibration: Calibration, judges: list[str]) -> JudgeCalibration:
    where = str(_shown(calibration.labels.path))
    kappa = calibration.overall.kappa
    other = [judge for judge in judges if judge not in calibration.models]
    if other:
        return JudgeCalibration(False, f"uncalibrated: {where} calibrates "
                                       f"{', '.join(calibration.models)}, but {other[0]} judged",
                                where, kappa)
    if kappa is None:
        return JudgeCalibration(False, f"uncalibrated: kappa is undefined on {where} (people "
                                       "and the judge give every item one verdict)", where)
    interval = calibration.overall.interval
    shown = (f"kappa {kappa:.2f}" + (f" ({calibration.overall.confidence:.0%} interval "
                                     f"{interval[0]:.2f} to {interval[1]:.2f})"
                                     if interval is not None else ""))
    if kappa < calibration.floor:
        return JudgeCalibration(False, f"below its floor: {shown} is under min_kappa "
                                       f"{calibration.floor:g} ({where})", where, kappa)
    return JudgeCalibration(True, f"calibrated: {shown} ({where})", where, kappa)


@lru_cache(maxsize=64)
def _calibrated(path: Path, mtime: int) -> Calibration | tuple[str | None, str]:
    """The calibration of the labels file at ``path`` (as of ``mtime``: a changed file is
    calibrated again), or, when it cannot be computed offline, its rubric's hash (None: the
    file does not load) and why."""
    del mtime
    try:
        return calibrate(path)
    except HarnessError as exc:
        try:
            rubric: str | None = text_hash(load_labels(path).rubric)
        except HarnessError:
            rubric = None
        return rubric, str(exc).splitlines()[0]
