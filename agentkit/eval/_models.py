"""A model of ``agentkit eval --models``: the name the server knows it by, optionally with
its own sampling -- ``smollm2-135m-instruct@temperature=0.2`` -- so one model at two
temperatures is two models of the matrix, each with its own cassettes, compared like any
two (``--compare NAME@temperature=0 NAME@temperature=0.8``).

A spec is written back in one canonical spelling (``@temperature=0.20`` is
``@temperature=0.2``), which names its cases (``scenario[agent type@spec]``) and its
cassette files: two spellings of one spec are one model, and listing both is an error; so
is listing two models whose cassette file names would be one (``a/b`` and ``a-b``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentkit.core.errors import BadInputError
from agentkit.scenario._layout import file_safe

__all__ = ["ModelSpec", "parse_model", "canonical_models"]

_SETTINGS = ("temperature",)


@dataclass(frozen=True)
class ModelSpec:
    """``name`` (as the server lists it) and the temperature its samples are drawn at (None:
    the evaluation's ``--temperature``)."""

    name: str
    temperature: float | None = None

    @property
    def spec(self) -> str:
        """The canonical spelling."""
        return self.name if self.temperature is None else \
            f"{self.name}@temperature={self.temperature:g}"


def parse_model(text: str, option: str = "--models") -> ModelSpec:
    """``NAME`` or ``NAME@temperature=T`` (T from 0 to 2); anything else is a
    :class:`BadInputError` naming ``option`` and what to write."""
    name, at, settings = text.partition("@")
    name = name.strip()
    if not name:
        raise BadInputError(f"{option}: {text!r} names no model; write NAME or "
                            "NAME@temperature=T")
    if not at:
        return ModelSpec(name)
    key, equals, value = settings.partition("=")
    key = key.strip()
    if key not in _SETTINGS or not equals:
        raise BadInputError(f"{option}: {text!r}: unknown model setting {key!r}; a model "
                            f"carries {', '.join(_SETTINGS)} (NAME@temperature=T)")
    try:
        temperature = float(value)
    except ValueError:
        temperature = math.nan
    if not 0 <= temperature <= 2:
        raise BadInputError(f"{option}: {text!r}: temperature must be a number from 0 to 2, "
                            f"got {value.strip()!r}")
    return ModelSpec(name, temperature)


def canonical_models(models: Sequence[str]) -> list[str]:
    """``--models`` in canonical spelling; two that name one spec are a
    :class:`BadInputError` (their samples would share cassettes and pair with themselves)."""
    seen: dict[str, str] = {}
    files: dict[str, str] = {}
    for text in models:
        spec = parse_model(text).spec
        if spec in seen:
            same = "twice" if seen[spec] == text else f"as {seen[spec]!r} and {text!r}"
            raise BadInputError(f"--models: {spec} is listed {same}; list each model once")
        seen[spec] = text
        stem = file_safe(spec)
        if stem in files:
            raise BadInputError(f"--models: {files[stem]} and {spec} would share cassette "
                                f"files (both are {stem!r} in a file name); evaluate them in "
                                "two runs with their own --cassettes folders")
        files[stem] = spec
    return list(seen)
