"""A report directory that cannot be one is a one-line error naming it, before the script runs."""
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
