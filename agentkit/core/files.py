"""Crash-safe file writes.

* :func:`atomic_write_text`: a reader sees the old file or the new one, never half of either.
* :func:`replace_together`: several files replaced as one (a cassette and its recorded
  trace); after a crash at any point, :func:`settle` leaves all old files or all new ones.
* :func:`replace_folder`: a folder's files replaced as one (a report): written into a hidden
  staging folder beside it, then swapped in. Only a folder that a marker file says it wrote
  (or an empty or missing one) is replaced: :func:`replaceable_folder` says why not first.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from agentkit.core.errors import BadInputError

try:
    import fcntl
except ImportError:  # pragma: no cover  (not POSIX: no cross-process lock)
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_write_text", "replace_together", "settle", "replace_folder",
           "replaceable_folder", "FolderRefused", "FileWriteError"]


class FolderRefused(ValueError):
    """:func:`replace_folder` will not replace this folder (it would lose what it holds, or
    pull the current folder from under the process); the message says why and what to do."""


def _mode_for(path: Path) -> int:
    """Keep an existing file's mode; a new file gets the default (0666 less the umask)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _through_links(path: str | Path) -> Path:
    """The file a write to ``path`` means: a symlink's target (a cassette kept elsewhere and
    linked in stays linked), never the link itself replaced by a regular file."""
    return Path(os.path.realpath(path))


class FileWriteError(BadInputError):
    """A file or folder could not be written (a full disk, no permission, a read-only file
    system); every file is as it was. The message names the file and says ``(nothing
    written)``; commands exit 2 with it."""


@contextlib.contextmanager
def _writing(path: str | Path) -> Iterator[None]:
    """Every writer's one way to fail: an ``OSError`` becomes a :class:`FileWriteError`."""
    try:
        yield
    except OSError as exc:
        reason = (exc.strerror or str(exc) or type(exc).__name__).lower()
        raise FileWriteError(f"{path}: cannot write it: {reason} (nothing written)") from None


def atomic_write_text(path: str | Path, text: str, *, mode_of: str | Path | None = None) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename
    (:class:`FileWriteError` if it cannot: the old file stays).

    The file keeps its mode (or takes that of ``mode_of``, when given); a symlink is written
    through (its target is replaced, the link stays)."""
    with _writing(path):
        _atomic_write(_through_links(path), text, mode_of)


def _atomic_write(path: Path, text: str, mode_of: str | Path | None) -> None:
    if path.exists() and not path.is_file():  # a folder, or a device such as /dev/null
        raise OSError(errno.EINVAL, "it is not a regular file, and writing replaces it")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        _write_synced(Path(tmp), text, mode_of=Path(mode_of) if mode_of is not None else path)
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
    """Replace each ``(path, text)`` as one change (the paths may be in several folders; a
    symlink is written through, so its target's folder holds that file's pending copy).

    Every new text is first written, atomically and in order, to a hidden ``.<name>.pending``
    beside its file; then each pending file is renamed over its file, in order. A crash while
    the pending files are written leaves the first of them: :func:`settle` deletes them all
    (every old file stays). A crash while renaming leaves the first one renamed already:
    :func:`settle` renames the rest (every file is new). Writers of the same files take
    turns (a lock on the first file's folder, which the kernel releases if the holder dies)."""
    paths = [_through_links(path) for path, _ in files]
    folders = list(dict.fromkeys(path.parent for path in paths))
    with _writing(", ".join(str(path) for path, _ in files)):
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        with _locked(paths[0].parent):
            _settle(paths)
            try:
                for path, (_, text) in zip(paths, files, strict=True):
                    _atomic_write(_pending(path), text, mode_of=path)
            except BaseException:
                for path in paths:  # undone: every old file stays
                    _pending(path).unlink(missing_ok=True)
                raise
            for path in paths:
                os.replace(_pending(path), path)
            for folder in folders:
                _sync_folder(folder)


def settle(paths: Sequence[str | Path]) -> None:
    """Finish or undo a :func:`replace_together` of ``paths`` (same paths, same order) that a
    crash interrupted; afterwards no pending or temporary file of it is left."""
    # the common case, told without the lock, without resolving every folder of every path
    # and on the paths' text (every replay of a recorded scenario asks): nothing to settle
    files = [_linked_file(path) for path in paths]
    if not os.path.isdir(files[0][0]):  # the first pending file is written first: nothing was
        return
    if not _left_over(files):
        return
    resolved = [_through_links(path) for path in paths]
    with _locked(resolved[0].parent):
        _settle(resolved)


def _linked_file(path: str | Path) -> tuple[str, str]:
    """The folder and name where :func:`_through_links` puts ``path``'s pending files, as far
    as listing them goes: a symlinked file's target's; otherwise the path's own (a folder on
    the way is listed through its link all the same)."""
    text = os.fspath(path) if isinstance(path, Path) else str(Path(path))  # as Path spells it
    if os.path.islink(text):
        text = os.path.realpath(text)
    folder, name = os.path.split(text)
    return folder or ".", name


def _left_over(files: list[tuple[str, str]]) -> bool:
    """Whether a pending or temporary file of a replacement of ``files`` (each its folder and
    name) is there: one listing of each folder. No lock needed: a writer that starts after it
    leaves nothing to settle, one under way left its files (:func:`_settle` then decides
    under the lock)."""
    marks: dict[str, tuple[str, ...]] = {}
    for folder, name in files:
        marks[folder] = (*marks.get(folder, ()), f".{name}.pending")  # _pending(path).name
    for folder, pendings in marks.items():
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        stale = tuple([f".{pending}." for pending in pendings])
        # a list, not any() over a generator: no Python frame resumed per file of the folder
        if [name for name in names if name in pendings or name.startswith(stale)]:
            return True
    return False


def _settle(paths: list[Path]) -> None:
    pendings = [_pending(path) for path in paths]
    if pendings[0].exists():  # the crash came while writing: undo
        for pending in pendings:
            pending.unlink(missing_ok=True)
    else:  # renaming had begun: finish it
        for pending, path in zip(pendings, paths, strict=True):
            if pending.exists():
                os.replace(pending, path)
    for pending in pendings:  # temporary files of a write a crash cut short
        for stale in pending.parent.glob(f".{pending.name}.*.tmp"):
            stale.unlink(missing_ok=True)


def replaceable_folder(folder: str | Path, marker: str) -> Path:
    """The real folder :func:`replace_folder` would replace for ``folder`` (a symlink
    resolved, so the write goes through it), or :class:`FolderRefused` saying why not.

    Refused: a file; the current folder or one holding it (``.``, ``..``, ``/``); a folder
    that holds anything but lacks the file ``marker`` -- it is not one a replace_folder with
    that marker wrote, and replacing it could delete a user's files."""
    real = Path(os.path.realpath(folder))
    try:
        here: Path | None = Path.cwd().resolve()
    except OSError:  # the current folder was deleted: nothing to pull from under anyone
        here = None
    if real == real.parent or (here is not None and (real == here or real in here.parents)):
        raise FolderRefused("is the current folder or holds it, and it would be replaced "
                            "whole; give a folder of its own, e.g. reports/latest")
    if real.exists() and not real.is_dir():
        raise FolderRefused("is a file, not a folder; give a folder (it is created if missing)")
    if real.is_dir() and not (real / marker).is_file() and any(real.iterdir()):
        raise FolderRefused(f"is a folder with other files and no {marker} file (the mark of "
                            "a folder agentkit wrote), so replacing it could delete them; give "
                            "a new or empty folder, or one agentkit wrote")
    return real


def replace_folder(folder: str | Path, files: Mapping[str, str | Path], *,
                   marker: str) -> Path:
    """Make ``folder`` hold ``files`` (name -> text, or the path of a file already written
    whose content it takes: hard-linked where the file system allows, else copied -- so a
    large file is never held in memory), all new at once; returns ``folder`` (as given, a
    symlink kept). ``files`` is iterated a few times and never copied, so a mapping that
    makes its names as they are iterated holds none of them.

    ``marker`` names the file among ``files`` that marks the folder as this writer's: an
    existing folder is replaced only if it has one (or is empty), see
    :func:`replaceable_folder`; a symlink to it stays, and the folder it leads to is replaced.

    A name may be a relative path (``traces/a.json``): a subfolder that ``files`` writes into
    is replaced whole, so files it held before and ``files`` does not name are gone.

    The files are written into a hidden staging folder beside ``folder`` (``.<name>.staging-*``;
    anything else ``folder`` holds is copied along), which then takes ``folder``'s place: a
    reader sees the old set or the new one, never a mix. A writer killed while writing leaves
    only its staging folder, which the next call removes; killed between the two renames of
    the swap, it leaves the old folder aside (``.<name>.old-*``), which the next call puts back
    first. Writers of the same folder take turns (a lock the kernel releases if one dies).
    """
    outside = [n for n in files if Path(n).is_absolute() or ".." in Path(n).parts or not n]
    if outside:
        raise ValueError(f"replace_folder: {outside[0]!r} is not a path inside the folder")
    if marker not in files or Path(marker).name != marker:
        raise ValueError(f"replace_folder: the marker {marker!r} must be a file name among "
                         "the files written")
    given = Path(folder)
    real = replaceable_folder(given, marker)
    with _writing(given):
        real.parent.mkdir(parents=True, exist_ok=True)
        with _locked(real.parent):
            _tidy_folder(real)
            replaceable_folder(given, marker)  # again, now that no other writer can change it
            _swap_in(real, files)
    return given


def _swap_in(folder: Path, files: Mapping[str, str | Path]) -> None:
    """Stage ``files`` (and what else ``folder`` holds) beside ``folder``, then swap it in
    (the caller holds the lock)."""
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.staging-", dir=folder.parent))
    aside = folder.with_name(f".{folder.name}.old-{staging.name.rsplit('-', 1)[-1]}")
    try:
        replaced = {Path(name).parts[0] for name in files}
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name not in replaced:
                    _copy(entry, staging / entry.name)
            os.chmod(staging, folder.stat().st_mode & 0o7777)
        else:
            os.chmod(staging, 0o777 & ~_umask())
        for name, text in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, Path):
                _take_synced(text, staging / name, mode_of=folder / name)
            else:
                _write_synced(staging / name, text, mode_of=folder / name)
        for subfolder in {(staging / name).parent for name in files} - {staging}:
            _sync_folder(subfolder)
        _sync_folder(staging)
        if folder.is_dir():
            os.rename(folder, aside)
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if aside.exists() and not folder.exists():
            os.rename(aside, folder)
        raise
    _sync_folder(folder.parent)
    shutil.rmtree(aside, ignore_errors=True)


def _tidy_folder(folder: Path) -> None:
    """Undo what a killed :func:`replace_folder` left: put a folder set aside back, remove
    staging folders (the caller holds the lock)."""
    for aside in sorted(folder.parent.glob(f".{folder.name}.old-*")):
        if not folder.exists():
            os.rename(aside, folder)
        else:
            shutil.rmtree(aside, ignore_errors=True)
    for staging in folder.parent.glob(f".{folder.name}.staging-*"):
        shutil.rmtree(staging, ignore_errors=True)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _copy(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def _take_synced(source: Path, path: Path, *, mode_of: Path) -> None:
    """``path`` with the content of the file ``source``: a hard link to it, or a copy."""
    try:
        os.link(source, path)
    except OSError:
        shutil.copyfile(source, path)
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
    os.chmod(path, _mode_for(mode_of))


def _write_synced(path: Path, text: str, *, mode_of: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, _mode_for(mode_of))
