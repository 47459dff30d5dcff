"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._roles``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._roles import (
    Channel,
    RoleAnswer,
    RoleEvent,
    RoleModels,
    RoleSource,
    role_events,
    transcript,
)

__all__ = ["Channel", "role_events", "RoleAnswer", "RoleEvent", "RoleModels", "RoleSource",
           "transcript"]
