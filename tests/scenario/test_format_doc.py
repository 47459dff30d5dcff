"""docs/reference/scenario-format.md is the format reference model.py points to: it exists and names every
field of every part of a scenario file."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentkit.scenario import _faults as faults
from agentkit.scenario import _model as model
from agentkit.scenario import _trajectory as trajectory

README = Path(__file__).resolve().parents[2] / "docs" / "reference" / "scenario-format.md"
PARTS = [model.Scenario, model.ToolSpec, model.MCPServerSpec, model.HistoryMessage, model.Turn,
         model.AgentSpec, model.TeamAgent, model.ScriptReply, model._ToolCallItem, model._ErrorSpec,
         model.Expect, model.TextMatch, model.ToolCallsExpect, model.ToolCallSpec,
         model.HandoffsExpect, model.HandoffSpec, model.MessageExpect,
         trajectory.TrajectoryStep, trajectory.TrajectoryCallSpec, model.Thresholds,
         model.Threshold, model.ResumeFrom, model.Judged, model.JudgeSpec,
         model.SimulatedUser, model.WorldSpec, model.StateExpect, model.StateMatch,
         model.Rule, model.RuleEvent, model.CallPattern, faults.Fault, faults.FaultPlan,
         faults.SafeAnswer, faults.ModelFault, model.OneOf]


def test_the_model_points_to_the_format_reference_and_it_exists():
    assert "docs/reference/scenario-format.md" in (model.__doc__ or "")
    assert README.is_file()


@pytest.mark.parametrize("part", PARTS, ids=lambda part: part.__name__)
def test_the_reference_names_every_field(part: type[BaseModel]):
    text = README.read_text(encoding="utf-8")
    fields = [info.alias or name for name, info in part.model_fields.items()
              if not info.exclude]

    missing = [name for name in fields if not re.search(rf"`{name}`|\b{name}:", text)]

    assert missing == [], f"{part.__name__}: docs/reference/scenario-format.md does not describe {missing}"


def test_the_reference_names_every_choice_of_the_literal_fields():
    text = README.read_text(encoding="utf-8")
    choices = {str(choice) for part in PARTS for info in part.model_fields.values()
               for choice in _literal_choices(info.annotation)}

    assert sorted(c for c in choices if c not in text) == []


def _literal_choices(annotation: object) -> tuple[object, ...]:
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return tuple(choice for arg in typing.get_args(annotation)
                 for choice in _literal_choices(arg))
