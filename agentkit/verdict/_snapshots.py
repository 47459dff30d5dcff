"""The snapshot store of a session, as syrupy's is: every comparison goes through it, and it
knows which snapshots it compared, wrote and kept -- so a command reports the files it wrote,
and a snapshot its session never compared is kept (:meth:`SnapshotSession.settle`), never
left to look unused, without any caller having to say so.

Two stores: :class:`SnapshotFiles` (the commands: files compared, and with ``update`` written,
atomically) and the pytest plugin's syrupy store (so ``--snapshot-update`` works and syrupy
counts each item's snapshot once). ``policy`` says whether a difference fails the run
(``check``), is only shown (``report``) or is not looked at (``off``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentkit.core.files import atomic_write_text
from agentkit.core.textfiles import too_large_to_read
from agentkit.trace._compare import compare_with_snapshot

if TYPE_CHECKING:
    from agentkit.trace._trace import SampledTrace, Trace

__all__ = ["SnapshotSession", "SnapshotFiles", "SnapshotPolicy", "SnapshotState", "Compared",
           "NOT_CHECKED"]

SnapshotPolicy = Literal["check", "report", "off"]
SnapshotState = Literal["same", "changed", "stale", "missing", "created", "updated",
                        "not_checked"]
Compared = tuple[SnapshotState, list[str], dict[str, Any] | None]
"""What a comparison finds: state, diff lines (snapshot -> now), the stored trace if read."""
NOT_CHECKED: Compared = ("not_checked", [], None)


@dataclass
class SnapshotSession:
    """The snapshots of one session (module docstring). A store implements :meth:`_compare`
    (and :meth:`_keep` when keeping means something to it, as it does to syrupy)."""

    policy: SnapshotPolicy = "check"
    compared: list[Path] = field(default_factory=list, init=False, repr=False)
    written: list[Path] = field(default_factory=list, init=False, repr=False)
    kept: list[Path] = field(default_factory=list, init=False, repr=False)

    def compare(self, trace: Trace | SampledTrace, path: Path | None, *,
                accept: bool = True) -> Compared:
        """``same``/``changed``/``stale``/``missing`` (``created``/``updated`` when the store
        writes it), how the trace (or a sampled case's traces) differs and the stored trace
        when known. Without ``accept`` (a run that fails its own checks) the snapshot is
        compared and kept as it is, never written: the committed snapshot is the last
        behaviour that passed."""
        if path is None:
            return NOT_CHECKED
        found = self._compare(trace, path) if accept else self._check(trace, path)
        self.compared.append(path)
        if found[0] in ("created", "updated"):
            self.written.append(path)
        return found

    def keep(self, path: Path | None) -> None:
        """Keep the snapshot at ``path`` as it is (once)."""
        if path is None or path in self.kept:
            return
        self.kept.append(path)
        self._keep(path)

    def settle(self, path: Path | None) -> None:
        """A run is over: a snapshot it did not compare (it could not start, stopped on an
        error, or was cut short) is kept as it is."""
        if path is not None and path not in self.compared:
            self.keep(path)

    def update_hint(self) -> str:
        """How to accept a change or create a missing snapshot, for messages."""
        return "--snapshot-update"

    def _compare(self, trace: Trace | SampledTrace, path: Path) -> Compared:
        raise NotImplementedError

    def _check(self, trace: Trace | SampledTrace, path: Path) -> Compared:
        """Compare without ever writing (a run that failed its own checks): the snapshot is
        kept as it is."""
        self.keep(path)
        return compare_with_snapshot(trace.to_dict(), path)

    def _keep(self, path: Path) -> None:
        return None


@dataclass
class SnapshotFiles(SnapshotSession):
    """Snapshots compared (and, with ``update``, written) as files: ``agentkit run``,
    ``replay`` and ``report``. ``update`` writes a missing or changed snapshot of a run that
    passes its own checks, atomically."""

    update: bool = False
    hint: str = "agentkit run --snapshot-update"

    def _compare(self, trace: Trace | SampledTrace, path: Path) -> Compared:
        state, diff, stored = compare_with_snapshot(trace.to_dict(), path)
        if self.update and state != "same":
            text = trace.to_json()
            too_large = too_large_to_read(path, text)
            if too_large is not None:  # a snapshot no later run could read: not written
                return "stale", [f"the snapshot was not written: {too_large}; split the "
                                 "scenario's turns into several scenarios"], None
            atomic_write_text(path, text)
            return ("created" if state == "missing" else "updated"), diff, stored
        return state, diff, stored

    def update_hint(self) -> str:
        return self.hint
