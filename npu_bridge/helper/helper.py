"""`from npu_bridge.helper import helper; gen_npu_ops = helper.get_gen_ops()`.

On the NPU get_gen_ops loads the adapter's op library and returns its generated Python op module; here it returns
the module of emulated ops under the same names (npu_bridge.emulated_ops.gen_npu_ops).
"""
from npu_bridge.emulated_ops import gen_npu_ops


def get_gen_ops():
    """The module of the adapter's custom ops (drop_out_gen_mask, lamb_apply_optimizer_assign, ...)."""
    return gen_npu_ops
