"""What the environment asks of the emulation, applied when it is activated (npu_bridge.activate).

- NPU_BRIDGE_REPORT_DIR=DIR: write CI artifacts (npu_bridge.artifacts) for every emulated graph this process runs.
  `npu-run --report-dir DIR` sets it; launchers that are not ours (a shell script, a test runner) set it directly.
- NPU_BRIDGE_STRICT=1: configuration warnings are errors (core.options.config_warning reads it at each warning).
- `-W` / PYTHONWARNINGS entries naming npu_bridge.NpuConfigWarning: CPython resolves those categories before
  site-packages is importable, so it drops them with "Invalid -W option ignored"; they are applied here instead,
  which makes `PYTHONWARNINGS=error::npu_bridge.NpuConfigWarning` work as users expect.

This module imports only the standard library: the launcher reads the names below before TensorFlow loads.
"""
import os
import sys
import warnings

from npu_bridge.core.errors import STRICT_ENV, NpuConfigWarning

REPORT_DIR_ENV = "NPU_BRIDGE_REPORT_DIR"
WARNING_CATEGORY_NAMES = ("npu_bridge.NpuConfigWarning", "npu_bridge.core.errors.NpuConfigWarning")

__all__ = ["REPORT_DIR_ENV", "STRICT_ENV", "apply_environment", "prepare_report_dir"]


def apply_environment():
    """Apply the environment's requests; idempotent, so the launcher calls it again after setting its variables."""
    apply_warning_options(sys.warnoptions)
    report_dir = os.environ.get(REPORT_DIR_ENV)
    if report_dir:
        from npu_bridge import artifacts

        artifacts.start(report_dir)


def prepare_report_dir(path):
    """Create the artifact folder `path` if needed; None when it is a writable folder, else why not (a sentence).

    The launcher asks before the script runs, so a report directory that is a file or sits on a read-only mount is
    a one-line error rather than a traceback when the first session starts (or when the run record is written).
    """
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        return f"'{path}' exists and is not a folder"
    except OSError as err:
        return f"cannot create the folder '{path}': {err.strerror or err}"
    if not os.access(path, os.W_OK):
        return f"the folder '{path}' is not writable"
    return None


def apply_warning_options(options):
    """Install the filters of `-W action:message:category:module:lineno` entries whose category is ours."""
    for option in options:
        parts = [part.strip() for part in option.split(":")]
        if len(parts) < 3 or parts[2] not in WARNING_CATEGORY_NAMES:
            continue
        action, message, _, module, lineno = (parts + ["", ""])[:5]
        action = _action(action)
        if action is None or (lineno and not lineno.isdigit()):
            continue
        warnings.filterwarnings(action, message, NpuConfigWarning, module, int(lineno or 0))


def _action(text):
    """The warnings action a -W entry names, abbreviations included (as Python reads them); None if none."""
    if text in ("", "all"):
        return "always" if text else "default"
    return next((name for name in ("default", "always", "ignore", "module", "once", "error")
                 if name.startswith(text)), None)
