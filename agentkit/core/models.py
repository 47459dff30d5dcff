"""The base of agentkit's pydantic models: schemas are built on first use, not at import, which
keeps ``import agentkit.agent`` fast."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from agentkit.core.sim import MAX_LATENCY

__all__ = ["Model", "Seconds"]

#: Simulated seconds (real where a field says so): finite, >= 0 and at most a day
#: (:data:`agentkit.core.sim.MAX_LATENCY`), in scenario and cassette files alike.
Seconds = Annotated[float, Field(ge=0, le=MAX_LATENCY, allow_inf_nan=False)]


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
