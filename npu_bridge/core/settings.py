"""What the process environment tells the core, as one frozen value the core is given instead of reading it.

The core reads no environment variable: `npu_bridge.settings.core_settings()` reads these once at the edge (when
a session's options are parsed, in the report CLI, in the estimator faces) and the options carry them
(`NpuOptions.settings`) to everything that loads files or warns. Offline use that passes nothing gets the
environment as it is when the options are parsed. This module imports only the standard library.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class CoreSettings:
    """strict: configuration warnings are NpuConfigErrors (NPU_BRIDGE_STRICT, npu-run / npu-report --strict).
    opp_path: the operator library root to read instead of the built-in copy (ASCEND_OPP_PATH).
    soc: the soc a session emulates when its soc_config names none (NPU_BRIDGE_SOC; None: ascend910).
    """

    strict: bool = False
    opp_path: str | None = None
    soc: str | None = None


OFFLINE = CoreSettings()
