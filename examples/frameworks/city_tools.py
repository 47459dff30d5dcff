"""The project's own tools, which its agents offer and its scenarios' ``tools:`` name (so a
scenario's latency and failure schedules apply to them): the project stands on its own, copied
anywhere with agentkit and the frameworks installed."""

from __future__ import annotations

_POPULATION = {"paris": 2_102_650, "tokyo": 13_960_236, "nairobi": 4_397_073,
               "lima": 10_004_000, "ottawa": 1_017_449, "rome": 2_748_109}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def population(city: str) -> int:
    """The population of a city."""
    try:
        return _POPULATION[city.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown city: {city}") from None


def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b
