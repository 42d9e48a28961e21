"""The three console scripts answer --help and --version, and `npu-report diff` runs, without importing
TensorFlow (the console entry points, each in a fresh interpreter: npu_bridge.console)."""
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BASELINE = REPO / "examples" / "ci" / "baseline"
ENTRIES = {"npu-run": "npu_run", "npu-report": "npu_bridge.report_cli", "npu-debug": "npu_bridge.debug.cli"}


def _entry(tool, *args):
    """`tool args` through its console entry point; (exit code, stdout, stderr, TensorFlow imported)."""
    script = (f"import sys\nfrom {ENTRIES[tool]} import main\ncode = main(sys.argv[1:])\n"
              "print('tensorflow imported:', 'tensorflow' in sys.modules)\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    lines = done.stdout.rstrip("\n").splitlines()
    assert lines and lines[-1].startswith("tensorflow imported:"), done.stderr
    return done.returncode, "\n".join(lines[:-1]), done.stderr, lines[-1].endswith("True")


@pytest.mark.parametrize("tool", list(ENTRIES))
def test_help_and_version_do_not_import_tensorflow(tool):
    code, out, _, tensorflow = _entry(tool, "--help")
    assert (code, tensorflow) == (0, False) and out.startswith(f"usage: {tool}")
    code, out, _, tensorflow = _entry(tool, "--version")
    assert (code, tensorflow) == (0, False) and out.startswith(f"{tool} ")


def test_npu_debug_help_lists_its_commands_and_a_bad_one_is_a_usage_error():
    _, out, _, _ = _entry("npu-debug", "--help")
    assert all(name in out for name in ("compare", "suggest", "convert"))
    code, _, err, tensorflow = _entry("npu-debug", "bogus")
    assert (code, tensorflow) == (2, False) and "invalid choice: 'bogus'" in err


def test_npu_report_help_names_diff_and_diff_runs_without_tensorflow():
    _, out, _, _ = _entry("npu-report", "--help")
    assert "--precision-mode-v2" in out and "npu-report diff:" in out
    code, out, _, tensorflow = _entry("npu-report", "diff", BASELINE, BASELINE)
    assert (code, tensorflow) == (0, False) and "no decision or loss-curve changes" in out
    code, out, _, tensorflow = _entry("npu-report", "diff", "--help")
    assert (code, tensorflow) == (0, False) and "--max-skip-rate" in out


def test_a_missing_argument_is_a_usage_error_naming_the_tool():
    for tool, expected in (("npu-run", "npu-run: error"), ("npu-report", "npu-report: error"),
                           ("npu-report", "npu-report diff: error")):
        args = ("diff",) if "diff" in expected else ()
        code, _, err, tensorflow = _entry(tool, *args)
        assert (code, tensorflow) == (2, False) and expected in err
