"""atomic_write_text keeps file permissions sensible."""

import os
import stat

from agentkit.core.files import atomic_write_text


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
