"""`from npu_bridge.tbe import npu_vector_ops`: the LAMB optimizer's two fused steps, with the real signatures.

lamb_apply_optimizer_assign returns (update, next_v, next_m) and writes v and m; lamb_apply_weight_assign returns
the new weight and writes it. The update rules are in npu_bridge.emulated_ops.fused_optimizers.
"""
from npu_bridge.emulated_ops import gen_npu_ops


def lamb_apply_optimizer_assign(input0, input1, input2, input3, mul0_x, mul1_x, mul2_x, mul3_x, add2_y, steps,
                                do_use_weight, weight_decay_rate, name=None):
    """(update, next_v, next_m) for grad, v, m, var = input0..input3; v and m are written."""
    return gen_npu_ops.lamb_apply_optimizer_assign(input0, input1, input2, input3, mul0_x, mul1_x, mul2_x, mul3_x,
                                                   add2_y, steps, do_use_weight, weight_decay_rate, name=name)


def lamb_apply_weight_assign(input0, input1, input2, input3, input4, name=None):
    """The new var for w_norm, g_norm, lr, update, var = input0..input4; var is written."""
    return gen_npu_ops.lamb_apply_weight_assign(input0, input1, input2, input3, input4, name=name)
