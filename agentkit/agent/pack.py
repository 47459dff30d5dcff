"""``BaseLlamaPack``: a ready-made agent in one object (``llama_index.core.llama_pack`` shape)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["BaseLlamaPack"]


class BaseLlamaPack(ABC):
    """A pack bundles an agent and the parts it is made of: ``get_modules()`` names the parts,
    ``run(...)`` uses the agent."""

    @abstractmethod
    def get_modules(self) -> dict[str, Any]:
        """The pack's parts by name."""

    @abstractmethod
    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run the pack's agent."""
