"""npu_bridge on CPU: the Ascend TF adapter's Python API, with the NPU's precision behaviour emulated.

Importing any module of the package activates the emulated NPU session: from then on tf.compat.v1 sessions whose
ConfigProto holds the `NpuOptimizer` custom optimizer run through the precision pass. The one exception is the
`npu-run` console script (the top-level module `npu_run`), which reads its command line before TensorFlow is
imported and activates the emulation just before it runs the script. In a multi-rank job (RANK_SIZE > 1) every
session runs on this rank's TensorFlow server, where HCCL collectives reach the other ranks.
"""
import sys

from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning, PrecisionPassError

__all__ = ["activate", "NpuConfigError", "NpuConfigWarning", "PrecisionPassError"]


def activate():
    """Switch the emulation on (idempotent), with what the environment asks for (see npu_bridge.settings)."""
    from npu_bridge import debug, settings
    from npu_bridge.distributed.cluster import SessionEnvironment
    from npu_bridge.runtime import activate as activate_runtime
    from npu_bridge.runtime.activation import set_session_environment

    activate_runtime()
    set_session_environment(SessionEnvironment())
    debug.register()
    settings.apply_environment()


if not getattr(sys.modules.get("npu_run"), "STARTING", False):
    activate()
