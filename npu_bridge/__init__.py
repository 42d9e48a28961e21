"""npu_bridge on CPU: the Ascend TF adapter's Python API, with the NPU's precision behaviour emulated.

While the emulation is active, tf.compat.v1 sessions whose ConfigProto holds the `NpuOptimizer` custom optimizer
run through the precision pass; every other session is TensorFlow's own. It is switched on explicitly with
`activate()` (or for one block, `with emulation():`) and off with `deactivate()`, and implicitly by the imports
ported scripts start with, as the real adapter's import makes the NPU available: `import npu_bridge` itself,
`npu_bridge.npu_init`, `npu_bridge.estimator...`, `npu_bridge.hccl...`, `npu_bridge.npu_cpu...`,
`npu_bridge.tbe...`, `npu_bridge.helper...` and the top-level `hccl` package; `npu-run` switches it on just
before it runs the script. Importing anything else (the core's precision pass, the report CLI,
the debug library, the console scripts' argument parsing) patches nothing. In a multi-rank job (RANK_SIZE > 1)
every session runs on this rank's TensorFlow server, where HCCL collectives reach the other ranks.
"""
import contextlib
import sys
import types
from collections.abc import Iterator

from npu_bridge.core.errors import NpuConfigError, NpuConfigWarning, PrecisionPassError

__all__ = ["activate", "deactivate", "emulation", "NpuConfigError", "NpuConfigWarning", "PrecisionPassError"]


def activate() -> None:
    """Switch the emulation on (idempotent), with what the environment asks for (see npu_bridge.settings)."""
    from npu_bridge import debug, settings
    from npu_bridge.distributed.cluster import SessionEnvironment
    from npu_bridge.runtime import activation

    activation.activate()
    activation.set_session_environment(SessionEnvironment())
    debug.register()
    settings.apply_environment()


def deactivate() -> None:
    """Switch the emulation off: tf.compat.v1 sessions are TensorFlow's own again, whatever their config.

    Refused (RuntimeError) while a session created emulated is still open. Idempotent.
    """
    if "npu_bridge.runtime.activation" not in sys.modules:
        return
    from npu_bridge.runtime import activation

    activation.deactivate()
    activation.set_session_environment(None)


@contextlib.contextmanager
def emulation() -> Iterator[None]:
    """`with npu_bridge.emulation():` NpuOptimizer sessions created in the block run emulated; on leaving it the
    emulation is as it was before (still on when something else had switched it on)."""
    from npu_bridge.runtime import activation

    was_active = activation.is_active()
    activate()
    try:
        yield
    finally:
        if not was_active:
            deactivate()


def _requested_module() -> str | None:
    """The module the running import asked for, when that was npu_bridge or one of its modules; None if unknown.

    This file runs for `import npu_bridge` and for `import npu_bridge.core.options` alike, and only the first is a
    public face (as is `from npu_bridge import tf_adapter`: the package itself is what that statement imports).
    The frames of the import machinery hold each name asked for: the outermost importlib `_find_and_load` naming
    npu_bridge is the request, and under `python -m` the innermost runpy `_get_module_details` names the module
    being run.
    """
    imported = run = None
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        code, names = frame.f_code, frame.f_locals
        if code.co_name == "_find_and_load" and code.co_filename.startswith("<frozen importlib"):
            name = names.get("name")
            if isinstance(name, str) and name.split(".")[0] == __name__:
                imported = name
        elif code.co_name == "_get_module_details" and code.co_filename.endswith("runpy.py") and run is None:
            run = names.get("mod_name")
        frame = frame.f_back
    return run or imported


if _requested_module() in (__name__, None):
    activate()
