"""Crash-safe file writes.

* :func:`atomic_write_text`: a reader sees the old file or the new one, never half of either.
* :func:`replace_together`: several files replaced as one (a cassette and its recorded
  trace); after a crash at any point, :func:`settle` leaves all old files or all new ones.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover  (not POSIX: no cross-process lock)
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_write_text", "replace_together", "settle"]


def _mode_for(path: Path) -> int:
    """Keep an existing file's mode; a new file gets the default (0666 less the umask)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str, *, mode_of: str | Path | None = None) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename.

    The file keeps its mode (or takes that of ``mode_of``, when given)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _mode_for(Path(mode_of) if mode_of is not None else path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _pending(path: Path) -> Path:
    return path.with_name(f".{path.name}.pending")


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` across processes; the kernel drops it when the holder
    dies, so a killed writer never leaves a stale lock."""
    if fcntl is None:
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # also releases the lock


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system can fsync a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_together(files: Sequence[tuple[str | Path, str]]) -> None:
    """Replace each ``(path, text)`` as one change (the paths share a folder).

    Every new text is first written, atomically and in order, to a hidden ``.<name>.pending``
    beside its file; then each pending file is renamed over its file, in order. A crash while
    the pending files are written leaves the first of them: :func:`settle` deletes them all
    (every old file stays). A crash while renaming leaves the first one renamed already:
    :func:`settle` renames the rest (every file is new). Writers of the same folder take
    turns (a lock the kernel releases if the holder dies)."""
    paths = [Path(path) for path, _ in files]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    with _locked(paths[0].parent):
        _settle(paths)
        for path, (_, text) in zip(paths, files):
            atomic_write_text(_pending(path), text, mode_of=path)
        for path in paths:
            os.replace(_pending(path), path)
        _sync_folder(paths[0].parent)


def settle(paths: Sequence[str | Path]) -> None:
    """Finish or undo a :func:`replace_together` of ``paths`` (same paths, same order) that a
    crash interrupted; afterwards no pending or temporary file of it is left."""
    paths = [Path(path) for path in paths]
    if not paths[0].parent.is_dir():
        return
    with _locked(paths[0].parent):
        _settle(paths)


def _settle(paths: list[Path]) -> None:
    pendings = [_pending(path) for path in paths]
    if pendings[0].exists():  # the crash came while writing: undo
        for pending in pendings:
            pending.unlink(missing_ok=True)
    else:  # renaming had begun: finish it
        for pending, path in zip(pendings, paths):
            if pending.exists():
                os.replace(pending, path)
    for pending in pendings:  # temporary files of a write a crash cut short
        for stale in pending.parent.glob(f".{pending.name}.*.tmp"):
            stale.unlink(missing_ok=True)
