"""The base of agentkit's pydantic models: schemas are built on first use, not at import, which
keeps ``import agentkit.agent`` fast."""

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from agentkit.core.sim import MAX_LATENCY

__all__ = ["Model", "Seconds", "replaced"]

M = TypeVar("M", bound=BaseModel)
_new = object.__new__
_set = object.__setattr__

#: Simulated seconds (real where a field says so): finite, >= 0 and at most a day
#: (:data:`agentkit.core.sim.MAX_LATENCY`), in scenario and cassette files alike.
Seconds = Annotated[float, Field(ge=0, le=MAX_LATENCY, allow_inf_nan=False)]


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


def replaced(model: M, update: Mapping[str, Any]) -> M:
    """``model.model_copy(update=update)``: a shallow copy with ``update``'s fields replaced
    (not validated) and counted as set. For a model with neither extra fields nor private
    attributes it is made here, without pydantic's generic ``__copy__`` (three
    ``copy.copy`` calls): a tool call's output is copied so on every call."""
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.model_copy(update=update)
    copied = _new(type(model))
    _set(copied, "__dict__", {**model.__dict__, **update})
    _set(copied, "__pydantic_fields_set__", model.__pydantic_fields_set__ | update.keys())
    _set(copied, "__pydantic_extra__", None)
    _set(copied, "__pydantic_private__", None)
    return copied
