"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._record``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._record import (
    Recording,
    cassette_miss,
    record_scenario,
    rerecord_command,
)

__all__ = ["cassette_miss", "record_scenario", "Recording", "rerecord_command"]
