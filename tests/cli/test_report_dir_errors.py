"""A report directory that cannot be one is a one-line error naming it, before the script runs."""
import os
import subprocess
import sys

import pytest

from npu_bridge import launcher
from npu_bridge.artifacts import ArtifactWriter
from npu_bridge.core.errors import NpuConfigError


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("raise SystemExit('the script must not run')\n")
    return str(path)


@pytest.mark.parametrize("where, problem", [
    ("a_file", "exists and is not a folder"),
    ("a_file/below", "cannot create the folder '{path}': Not a directory"),
])
def test_npu_run_refuses_a_report_dir_it_cannot_create(tmp_path, capsys, script, where, problem):
    (tmp_path / "a_file").write_text("")
    path = tmp_path / where
    assert launcher.main(["--report-dir", str(path), script]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("npu-run: --report-dir: ")
    assert problem.format(path=path) in err and str(path) in err


def test_the_writer_names_the_variable_and_the_folder(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    with pytest.raises(NpuConfigError, match=f"NPU_BRIDGE_REPORT_DIR / npu-run --report-dir.*'{a_file}' exists and "
                                             "is not a folder"):
        ArtifactWriter(a_file)


@pytest.fixture
def unwritable_folder(tmp_path):
    """An existing folder this process may not write to. A mode-0o555 folder is writable to root (its access check
    passes), so as root the test takes /proc/1, which the kernel refuses to let anyone create files in."""
    folder = tmp_path / "read_only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if not os.access(folder, os.W_OK):
            yield folder
            return
        if os.path.isdir("/proc/1") and not os.access("/proc/1", os.W_OK):
            yield "/proc/1"
            return
        pytest.skip("no folder this process cannot write to (root without /proc)")
    finally:
        folder.chmod(0o755)


def test_npu_run_refuses_a_read_only_report_dir_in_one_line(unwritable_folder, script):
    """The README's promise end to end: the console script, exit 2, one line naming the folder, no traceback."""
    done = subprocess.run([sys.executable, "-m", "npu_run", "--report-dir", str(unwritable_folder), script],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"npu-run: --report-dir: the folder '{unwritable_folder}' is not writable\n"


def test_the_writer_refuses_a_read_only_folder_by_name(unwritable_folder):
    with pytest.raises(NpuConfigError, match=f"npu-run --report-dir\\): the folder '{unwritable_folder}' is not "
                                             "writable"):
        ArtifactWriter(unwritable_folder)
