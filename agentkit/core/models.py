"""The base of agentkit's pydantic models: schemas are built on first use, not at import, which
keeps ``import agentkit.agent`` fast."""

from pydantic import BaseModel, ConfigDict

__all__ = ["Model"]


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
