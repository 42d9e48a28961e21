"""What the environment asks of the emulation: the one place its variables are read.

- NPU_BRIDGE_REPORT_DIR=DIR: write CI artifacts (npu_bridge.artifacts) for every emulated graph this process runs.
  `npu-run --report-dir DIR` sets it; launchers that are not ours (a shell script, a test runner) set it directly.
  Applied on activation (npu_bridge.activate).
- NPU_BRIDGE_STRICT=1, ASCEND_OPP_PATH, NPU_BRIDGE_SOC: the core's settings (core.settings.CoreSettings), read by
  `core_settings()` when a session is created (`session_options`), by the report CLI and the estimator faces,
  and passed to the core, which reads no environment itself.
- NPU_BRIDGE_PARAMETER_OVERRIDES: a JSON object {parameter_map key: value} that npu-debug suggest sets to rerun an
  unmodified script with other precision settings; every NpuOptimizer configuration read at this edge takes those
  values instead of the script's (`with_overrides`). Only keys that change precision decisions are accepted.
- `-W` / PYTHONWARNINGS entries naming npu_bridge.NpuConfigWarning: CPython resolves those categories before
  site-packages is importable, so it drops them with "Invalid -W option ignored"; they are applied here instead,
  which makes `PYTHONWARNINGS=error::npu_bridge.NpuConfigWarning` work as users expect.

This module imports only the standard library: the launcher reads the names below before TensorFlow loads.
"""
import json
import os
import sys
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from npu_bridge.core.errors import STRICT_ENV, NpuConfigError, NpuConfigWarning
from npu_bridge.core.settings import CoreSettings
from npu_bridge.core.soc import SOC_ENV_VAR

if TYPE_CHECKING:
    from npu_bridge.core.options import NpuOptions

REPORT_DIR_ENV = "NPU_BRIDGE_REPORT_DIR"
OPP_PATH_ENV = "ASCEND_OPP_PATH"
OVERRIDES_ENV = "NPU_BRIDGE_PARAMETER_OVERRIDES"
WARNING_CATEGORY_NAMES = ("npu_bridge.NpuConfigWarning", "npu_bridge.core.errors.NpuConfigWarning")
_OVERRIDABLE = ("precision_mode", "precision_mode_v2", "modify_mixlist", "customize_dtypes")

__all__ = ["OVERRIDES_ENV", "REPORT_DIR_ENV", "STRICT_ENV", "apply_environment", "core_settings",
           "parameter_map_options", "prepare_report_dir", "session_options"]


def core_settings(environ: Mapping[str, str] | None = None) -> CoreSettings:
    """The CoreSettings the environment (`environ`, default os.environ) gives, read now."""
    environ = os.environ if environ is None else environ
    return CoreSettings(strict=environ.get(STRICT_ENV, "") not in ("", "0"),
                        opp_path=environ.get(OPP_PATH_ENV) or None,
                        soc=environ.get(SOC_ENV_VAR, "").strip() or None)


def parameter_overrides(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """{key: value} from $NPU_BRIDGE_PARAMETER_OVERRIDES ({} when unset); NpuConfigError when malformed."""
    text = (os.environ if environ is None else environ).get(OVERRIDES_ENV)
    if not text:
        return {}
    try:
        overrides = json.loads(text)
    except json.JSONDecodeError as err:
        raise NpuConfigError(f"{OVERRIDES_ENV} is not a JSON object: {err}") from None
    if not isinstance(overrides, dict):
        raise NpuConfigError(f"{OVERRIDES_ENV} must be a JSON object {{key: value}}, got {text!r}")
    for key, value in overrides.items():
        if key not in _OVERRIDABLE or not isinstance(value, str):
            raise NpuConfigError(f"{OVERRIDES_ENV}: {key!r}: {value!r} is not accepted; keys are "
                                 f"{', '.join(_OVERRIDABLE)} and values strings (\"\" unsets a file)")
    return overrides


def with_overrides(parameter_map: Mapping[str, Any], overrides: Mapping[str, str]) -> Mapping[str, Any]:
    """The parameter_map (AttrValues or python values) with `overrides` in place: one precision key replaces the
    other, and "" unsets a file option."""
    if not overrides:
        return parameter_map
    values = dict(parameter_map)
    for key in ("precision_mode", "precision_mode_v2"):
        if key in overrides:
            values.pop("precision_mode_v2" if key == "precision_mode" else "precision_mode", None)
    for key, value in overrides.items():
        if value or key not in ("modify_mixlist", "customize_dtypes"):
            values[key] = value
        else:
            values.pop(key, None)
    from tensorflow.python.platform import tf_logging

    tf_logging.info("NpuOptimizer: %s overrides %s", OVERRIDES_ENV, overrides)
    return values


def parameter_map_options(parameter_map: Mapping[str, Any], settings: CoreSettings | None = None) -> "NpuOptions":
    """NpuOptions of an NpuOptimizer parameter_map as a session of this process reads it: the environment's
    settings (or `settings`) and parameter overrides."""
    from npu_bridge.core.options import options_from_parameter_map

    settings = core_settings() if settings is None else settings
    return options_from_parameter_map(with_overrides(parameter_map, parameter_overrides()), settings)


def session_options(config: Any) -> "NpuOptions | None":
    """NpuOptions of a ConfigProto's NpuOptimizer entry as a session created now reads it, or None without one."""
    from npu_bridge.core.options import npu_parameter_map

    settings = core_settings()
    parameter_map = npu_parameter_map(config, settings)
    return None if parameter_map is None else parameter_map_options(parameter_map, settings)


def apply_environment() -> None:
    """Apply the environment's requests; idempotent, so the launcher calls it again after setting its variables."""
    apply_warning_options(sys.warnoptions)
    report_dir = os.environ.get(REPORT_DIR_ENV)
    if report_dir:
        from npu_bridge import artifacts

        artifacts.start(report_dir)


def prepare_report_dir(path: str) -> str | None:
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


def apply_warning_options(options: Iterable[str]) -> None:
    """Install the filters of `-W action:message:category:module:lineno` entries whose category is ours."""
    for option in options:
        parts = [part.strip() for part in option.split(":")]
        if len(parts) < 3 or parts[2] not in WARNING_CATEGORY_NAMES:
            continue
        written, message, _, module, lineno = (parts + ["", ""])[:5]
        action = _action(written)
        if action is None or (lineno and not lineno.isdigit()):
            continue
        warnings.filterwarnings(action, message, NpuConfigWarning, module, int(lineno or 0))  # type: ignore[arg-type]


def _action(text: str) -> str | None:
    """The warnings action a -W entry names, abbreviations included (as Python reads them); None if none."""
    if text in ("", "all"):
        return "always" if text else "default"
    return next((name for name in ("default", "always", "ignore", "module", "once", "error")
                 if name.startswith(text)), None)
