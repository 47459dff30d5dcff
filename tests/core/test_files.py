"""Crash-safe writes: atomic_write_text keeps file permissions sensible; replace_together
replaces a pair of files as one, even when the writer is killed (kill -9) halfway."""

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.core import files
from agentkit.core.files import (
    FileWriteError,
    FolderRefused,
    atomic_write_text,
    replace_folder,
    replace_together,
    settle,
)


def test_a_new_file_gets_the_default_mode_not_a_private_temp_file_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.md", "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "report.md").stat().st_mode) == 0o644


def test_rewriting_a_file_keeps_its_mode(tmp_path):
    target = tmp_path / "cassette.yaml"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text() == "new"


# ----------------------------------------------------------------- replace_together
_KILLED_WRITER = """\
import os, signal, sys
from pathlib import Path
from agentkit.core import files

folder, kill_at = Path(sys.argv[1]), int(sys.argv[2])
calls = 0
real_replace = os.replace

def replace(src, dst):
    global calls
    calls += 1
    if calls == kill_at:  # kill -9 right before this rename
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(src, dst)

os.replace = replace
files.replace_together([(folder / "x.trace.json", "new trace"), (folder / "x.yaml", "new cassette")])
"""


def _old_pair(folder: Path) -> None:
    (folder / "x.trace.json").write_text("old trace")
    (folder / "x.yaml").write_text("old cassette")


def _pair(folder: Path) -> tuple[str, str]:
    return (folder / "x.trace.json").read_text(), (folder / "x.yaml").read_text()


# renames: 1 tmp -> trace.pending, 2 tmp -> cassette.pending, 3 trace, 4 cassette
@pytest.mark.parametrize("kill_at, expected", [
    (1, ("old trace", "old cassette")), (2, ("old trace", "old cassette")),
    (3, ("old trace", "old cassette")), (4, ("new trace", "new cassette")),
    (5, ("new trace", "new cassette"))])
def test_a_writer_killed_at_any_point_settles_to_the_old_pair_or_the_new_one(tmp_path, kill_at,
                                                                            expected):
    _old_pair(tmp_path)

    run = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(tmp_path), str(kill_at)],
                         check=False)
    settle([tmp_path / "x.trace.json", tmp_path / "x.yaml"])

    assert run.returncode == (-signal.SIGKILL if kill_at <= 4 else 0)
    assert _pair(tmp_path) == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.trace.json", "x.yaml"]


def test_replace_together_finishes_an_interrupted_replacement_before_its_own(tmp_path):
    _old_pair(tmp_path)
    (tmp_path / ".x.yaml.pending").write_text("cassette of the interrupted replacement")

    replace_together([(tmp_path / "x.trace.json", "t2"), (tmp_path / "x.yaml", "c2")])

    assert _pair(tmp_path) == ("t2", "c2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.trace.json", "x.yaml"]


def test_replace_together_keeps_each_files_mode(tmp_path):
    _old_pair(tmp_path)
    (tmp_path / "x.yaml").chmod(0o640)

    replace_together([(tmp_path / "x.trace.json", "t2"), (tmp_path / "x.yaml", "c2")])

    assert stat.S_IMODE((tmp_path / "x.yaml").stat().st_mode) == 0o640


def test_atomic_write_text_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "shared" / "cassette.yaml"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "cassette.yaml"
    link.symlink_to(Path("shared") / "cassette.yaml")

    atomic_write_text(link, "new")

    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cassette.yaml", "shared"]
    assert [p.name for p in target.parent.iterdir()] == ["cassette.yaml"]


def test_replace_together_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "shared" / "a.yaml"
    target.parent.mkdir()
    target.write_text("old cassette")
    link = tmp_path / "a.yaml"
    link.symlink_to(target)

    replace_together([(tmp_path / "a.trace.json", "new trace"), (link, "new cassette")])
    settle([tmp_path / "a.trace.json", link])

    assert link.is_symlink() and target.read_text() == "new cassette"
    assert (tmp_path / "a.trace.json").read_text() == "new trace"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.trace.json", "a.yaml", "shared"]
    assert [p.name for p in target.parent.iterdir()] == ["a.yaml"]


def test_settle_with_nothing_left_over_resolves_no_folder_of_the_paths(tmp_path, monkeypatch):
    """Every replay settles its recording's files: the common case (nothing left over) lists
    their folders, it does not resolve every folder of every path."""
    _old_pair(tmp_path)
    resolved: list[str] = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath",
                        lambda path, **kw: resolved.append(str(path)) or realpath(path, **kw))

    settle([tmp_path / "x.trace.json", tmp_path / "x.yaml"])
    assert resolved == []

    (tmp_path / ".x.yaml.pending").write_text("cassette of the interrupted replacement")
    settle([tmp_path / "x.trace.json", tmp_path / "x.yaml"])
    assert len(resolved) == 2  # something to settle: the files it replaces, resolved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.trace.json", "x.yaml"]


def test_settle_with_nothing_left_over_runs_few_python_calls(tmp_path):
    # issue 36: every replay of a recorded scenario settles its recording's files; the
    # common case reads the paths' text (no pathlib object built, no generator resumed per
    # file of the folder): 92 calls for two files before, 19 after
    from tests.python_calls import python_calls

    _old_pair(tmp_path)
    for name in range(30):
        (tmp_path / f"other{name}.yaml").write_text("another recording")
    files = [tmp_path / "x.trace.json", tmp_path / "x.yaml"]
    settle(files)

    _, called = python_calls(lambda: settle(files))
    assert len(called) <= 20


def test_settle_of_paths_given_as_text_finds_what_was_left(tmp_path):
    _old_pair(tmp_path)
    (tmp_path / ".x.yaml.pending").write_text("cassette of the interrupted replacement")

    settle([f"{tmp_path}//x.trace.json", f"{tmp_path}/./x.yaml"])  # spelled as Path would not

    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.trace.json", "x.yaml"]


def test_settle_through_a_symlink_settles_what_was_left_beside_the_target(tmp_path):
    target = tmp_path / "shared" / "a.yaml"
    target.parent.mkdir()
    target.write_text("old cassette")
    link = tmp_path / "a.yaml"
    link.symlink_to(target)
    (target.parent / ".a.yaml.pending").write_text("half a new cassette")

    settle([link])  # the crash came while writing (its first file pending): undone

    assert link.is_symlink() and target.read_text() == "old cassette"
    assert [p.name for p in target.parent.iterdir()] == ["a.yaml"]


def test_settle_of_a_folder_that_does_not_exist_does_nothing(tmp_path):
    settle([tmp_path / "nope" / "a", tmp_path / "nope" / "b"])

    assert not (tmp_path / "nope").exists()


# ----------------------------------------------------------------- replace_folder
_KILLED_REPORT = """\
import os, signal, sys
from pathlib import Path
from agentkit.core import files

folder, kill_at = Path(sys.argv[1]), int(sys.argv[2])
calls = 0

def killing(real):
    def call(*args, **kwargs):
        global calls
        calls += 1
        if calls == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return call

# the writer's steps: 1-4 write the marker and the three files, 5 moves the old folder
# aside, 6 moves the staging folder in
files._write_synced = killing(files._write_synced)
os.rename = killing(os.rename)
files.replace_folder(folder, {".made-by-test": "new", "report.md": "new md",
                              "report.json": "new json", "report.html": "new html"},
                     marker=".made-by-test")
"""


_MARKER = ".made-by-test"


def _old_report(folder: Path) -> None:
    folder.mkdir()
    (folder / _MARKER).write_text("old")
    for name in ("report.md", "report.json", "report.html"):
        (folder / name).write_text(f"old {name.split('.')[1]}")
    (folder / "notes.txt").write_text("kept")


def _report(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def _versions(folder: Path) -> set[str]:
    return {text.split()[0] for name, text in _report(folder).items() if name != "notes.txt"}


@pytest.mark.parametrize("kill_at, right_after", [
    (1, {"old"}), (2, {"old"}), (3, {"old"}), (4, {"old"}), (5, {"old"}), (6, None),
    (7, {"new"})])
def test_a_report_writer_killed_at_any_point_leaves_old_or_new_files_never_a_mix(
        tmp_path, kill_at, right_after):
    folder = tmp_path / "latest"
    _old_report(folder)

    run = subprocess.run([sys.executable, "-c", _KILLED_REPORT, str(folder), str(kill_at)],
                         check=False)

    assert run.returncode == (-signal.SIGKILL if kill_at <= 6 else 0)
    # killed between the two renames, the folder is briefly missing (never mixed)
    assert (_versions(folder) if folder.exists() else None) == right_after
    # the next report tidies up first
    replace_folder(folder, {_MARKER: "next", "report.md": "next md"}, marker=_MARKER)
    assert _versions(folder) == {"next", "new" if kill_at == 7 else "old"}
    assert _report(folder)["notes.txt"] == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]


def test_replace_folder_puts_back_a_folder_a_killed_writer_left_aside(tmp_path):
    (tmp_path / ".latest.old-abc").mkdir()
    (tmp_path / ".latest.old-abc" / _MARKER).write_text("")
    (tmp_path / ".latest.old-abc" / "report.md").write_text("old md")
    (tmp_path / ".latest.staging-abc").mkdir()

    replace_folder(tmp_path / "latest", {_MARKER: "", "report.json": "new json"}, marker=_MARKER)

    assert _report(tmp_path / "latest") == {_MARKER: "", "report.json": "new json",
                                            "report.md": "old md"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]


def test_replace_folder_gives_a_new_folder_the_usual_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        replace_folder(tmp_path / "latest", {_MARKER: "", "report.md": "x"}, marker=_MARKER)
    finally:
        os.umask(umask)

    assert stat.S_IMODE((tmp_path / "latest").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "latest" / "report.md").stat().st_mode) == 0o644


# ----------------------------------------------------------------- replace_folder refuses


def _ours(folder: Path) -> Path:
    """A folder an earlier replace_folder with ``_MARKER`` made."""
    replace_folder(folder, {_MARKER: "", "report.md": "old md"}, marker=_MARKER)
    return folder


def test_replace_folder_refuses_a_folder_without_its_marker_and_leaves_it(tmp_path):
    mine = tmp_path / "mine"
    (mine / "traces").mkdir(parents=True)
    (mine / "traces" / "keep.json").write_text("{}")

    with pytest.raises(FolderRefused, match=r"and no \.made-by-test file"):
        replace_folder(mine, {_MARKER: "", "traces/a.json": "{}"}, marker=_MARKER)

    assert (mine / "traces" / "keep.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_replace_folder_takes_an_empty_folder_and_leaves_its_marker_in_it(tmp_path):
    (tmp_path / "out").mkdir()

    replace_folder(tmp_path / "out", {_MARKER: "ours", "report.md": "md"}, marker=_MARKER)

    assert _report(tmp_path / "out") == {_MARKER: "ours", "report.md": "md"}


def test_replace_folder_replaces_a_folder_with_its_marker(tmp_path):
    folder = _ours(tmp_path / "out")

    replace_folder(folder, {_MARKER: "", "report.md": "new md"}, marker=_MARKER)

    assert _report(folder)["report.md"] == "new md"


def test_replace_folder_needs_the_marker_among_the_files_it_writes(tmp_path):
    with pytest.raises(ValueError, match=r"\.made-by-test"):
        replace_folder(tmp_path / "out", {"report.md": "md"}, marker=_MARKER)

    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("given", [".", "", ".."])
def test_replace_folder_refuses_the_current_folder_and_the_folders_holding_it(
        tmp_path, monkeypatch, given):
    # even a folder with the marker: replacing it would pull the ground from under the
    # process (and `..` copied the folder into itself, staging inside what it copied)
    work = _ours(tmp_path / "parent") / "work"
    (tmp_path / "parent" / "work").mkdir()
    (work / _MARKER).write_text("")
    monkeypatch.chdir(work)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))

    with pytest.raises(FolderRefused, match="is the current folder or holds it"):
        replace_folder(given, {_MARKER: "", "report.md": "new md"}, marker=_MARKER)

    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before


def test_replace_folder_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    target = _ours(tmp_path / "reports" / "2024")
    link = tmp_path / "latest"
    link.symlink_to(target)

    written = replace_folder(link, {_MARKER: "", "report.md": "new md"}, marker=_MARKER)

    assert link.is_symlink() and link.resolve() == target
    assert (target / "report.md").read_text() == "new md"
    assert written == link
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "reports"]
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["2024"]


def test_replace_folder_through_a_symlink_to_a_folder_not_its_own_is_refused(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    (tmp_path / "latest").symlink_to(tmp_path / "home")

    with pytest.raises(FolderRefused, match=r"and no \.made-by-test file"):
        replace_folder(tmp_path / "latest", {_MARKER: "", "report.md": "md"}, marker=_MARKER)

    assert (tmp_path / "latest").is_symlink()
    assert _report(tmp_path / "home") == {"notes.txt": "mine"}


def _disk_full_after(monkeypatch: pytest.MonkeyPatch, writes: int) -> None:
    """Every synced write after the first ``writes`` fails as on a full disk."""
    real, done = files._write_synced, []

    def write(path: Path, text: str, *, mode_of: Path) -> None:
        if len(done) >= writes:
            path.write_text(text[: len(text) // 2])  # what a full disk leaves: a part
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        done.append(path)
        real(path, text, mode_of=mode_of)

    monkeypatch.setattr(files, "_write_synced", write)


def test_a_full_disk_in_replace_together_keeps_every_old_file_and_no_pending_one(
        tmp_path, monkeypatch):
    first, second = tmp_path / "a.yaml", tmp_path / "b.json"
    first.write_text("old a")
    second.write_text("old b")
    _disk_full_after(monkeypatch, 1)

    with pytest.raises(FileWriteError) as caught:
        replace_together([(first, "new a"), (second, "new b")])

    assert str(caught.value) == (f"{first}, {second}: cannot write it: no space left on "
                                 "device (nothing written)")
    assert (first.read_text(), second.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.json"]


def test_a_full_disk_in_replace_folder_keeps_the_old_folder_and_says_so(tmp_path, monkeypatch):
    folder = tmp_path / "report"
    replace_folder(folder, {"report.md": "old", ".marker": ""}, marker=".marker")
    _disk_full_after(monkeypatch, 0)

    with pytest.raises(FileWriteError, match=r"report: cannot write it: no space left on "
                                             r"device \(nothing written\)"):
        replace_folder(folder, {"report.md": "new", ".marker": ""}, marker=".marker")

    assert (folder / "report.md").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_a_path_that_is_not_a_regular_file_is_never_replaced(tmp_path):
    os.mkfifo(tmp_path / "pipe")  # stands for a device such as /dev/null

    with pytest.raises(files.FileWriteError, match="not a regular file"):
        files.atomic_write_text(tmp_path / "pipe", "text")
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode)


def test_replace_folder_takes_a_file_already_written_without_reading_it_into_memory(tmp_path):
    written = tmp_path / "spool" / "big.json"
    written.parent.mkdir()
    written.write_text('{"runs": 4960}\n', encoding="utf-8")

    folder = replace_folder(tmp_path / "report", {"marker": "x", "traces/big.json": written},
                            marker="marker")

    assert (folder / "traces/big.json").read_text(encoding="utf-8") == '{"runs": 4960}\n'
    assert written.read_text(encoding="utf-8") == '{"runs": 4960}\n'
