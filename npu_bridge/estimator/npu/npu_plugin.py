"""Device-level switches of the real npu_plugin module.

`set_device_sat_mode` chooses how the NPU reports floating-point overflow: 0 = saturation mode (fp16 results
clamp to +-65504 and a status register flags the overflow; the default on first-generation Ascend910), 1 =
INF/NaN mode (IEEE behaviour; the default on 910B and later). As on the device it switches every session: the
precision pass clamps float16 results (core/precision/saturation.py) and feeds loss scaling's overflow status.
"""
import tensorflow.compat.v1 as tf

from npu_bridge import tf_private
from npu_bridge.core import soc as _soc
from npu_bridge.core.errors import NpuConfigError

SATURATION_MODE = 0
INF_NAN_MODE = 1

def set_device_sat_mode(mode):
    """Select saturation (0) or INF/NaN (1) overflow mode for the whole device (graphs rewritten after the call)."""
    if mode not in (SATURATION_MODE, INF_NAN_MODE):
        raise NpuConfigError(f"set_device_sat_mode: mode {mode!r} is invalid, it should be 0 (saturation) or 1 (INF/NaN)")
    _soc.set_device_saturation(mode == SATURATION_MODE)
    tf.logging.info("npu_bridge: overflow mode set to %s by set_device_sat_mode(%d)",
                    "saturation" if mode == SATURATION_MODE else "INF/NaN", mode)


def _soc_from_config(config):
    """The soc_config of a ConfigProto's NpuOptimizer entry, or None."""
    if config is None:
        return None
    for custom_op in config.graph_options.rewrite_options.custom_optimizers:
        if custom_op.name == "NpuOptimizer" and "soc_config" in custom_op.parameter_map:
            return custom_op.parameter_map["soc_config"].s.decode() or None
    return None


def current_soc():
    """The emulated soc: the default session's NpuOptimizer soc_config, else $NPU_BRIDGE_SOC, else ascend910."""
    from npu_bridge.core.soc import selected_soc
    from npu_bridge.settings import core_settings

    session = tf.get_default_session()
    soc_config = _soc_from_config(tf_private.session_config(session)) if session is not None else None
    return selected_soc(soc_config, core_settings().soc)


def is_inf_nan_enabled():
    """True when overflow shows as Inf/NaN (set_device_sat_mode(1), or a 910B-or-later soc without an override)."""
    return not _soc.saturates(current_soc())


def npu_close():
    """Release the device (the real npu_init registers it with atexit); nothing is held on the emulator."""


def _host_memory_unavailable(function):
    raise NotImplementedError(
        f"npu_plugin.{function}: host-memory embedding tables live in memory the NPU's host shares with the device "
        "(and RDMA between servers), which the CPU emulation does not have; keep the table in a variable and look "
        "it up with tf.nn.embedding_lookup instead")


def malloc_shared_memory(var_name, shape, data_type):
    """Not available off the device (host memory shared with the NPU): raises NotImplementedError saying so."""
    _host_memory_unavailable("malloc_shared_memory")


def get_var_addr_and_size(var_name):
    """Not available off the device (a variable's device address): raises NotImplementedError saying so."""
    _host_memory_unavailable("get_var_addr_and_size")


def rdma_remote_init(remote_var_list, mem_size):
    """Not available off the device (RDMA registration of host variables): raises NotImplementedError saying so."""
    _host_memory_unavailable("rdma_remote_init")
