"""The emulated custom ops under the snake_case names of the adapter's generated op module (gen_npu_ops).

Scripts reach this module as `helper.get_gen_ops()`, `npu_aicore_ops.npu_aicore_ops`, or the `gen_npu_ops` name
npu_loss_scale_optimizer exports, and call e.g. `gen_npu_ops.drop_out_gen_mask(shape, keep_prob, seed, seed2)`.
"""
from npu_bridge.emulated_ops.activations import (
    fast_gelu, fast_gelu_grad, fast_gelu_v2, fused_layer_norm, fused_layer_norm_grad)
from npu_bridge.emulated_ops.dropout_masks import (
    drop_out_do_mask, drop_out_do_mask_v3, drop_out_gen_mask, drop_out_gen_mask_v3)
from npu_bridge.emulated_ops.float_status import (
    npu_alloc_float_status, npu_clear_float_status, npu_clear_float_status_v2, npu_get_float_status,
    npu_get_float_status_v2)
from npu_bridge.emulated_ops.fused_optimizers import (
    adam_apply_one_assign, adam_apply_one_with_decay_assign, lamb_apply_optimizer_assign, lamb_apply_weight_assign,
    lars, lars_v2)
from npu_bridge.emulated_ops.host_ops import random_choice_with_mask
from npu_bridge.emulated_ops.recurrent import basic_lstm_cell, dynamic_augru, dynamic_gru_v2

__all__ = [
    "adam_apply_one_assign", "adam_apply_one_with_decay_assign", "basic_lstm_cell", "drop_out_do_mask",
    "drop_out_do_mask_v3", "drop_out_gen_mask", "drop_out_gen_mask_v3", "dynamic_augru", "dynamic_gru_v2",
    "fast_gelu", "fast_gelu_grad", "fast_gelu_v2", "fused_layer_norm", "fused_layer_norm_grad",
    "lamb_apply_optimizer_assign", "lamb_apply_weight_assign", "lars", "lars_v2", "npu_alloc_float_status",
    "npu_clear_float_status", "npu_clear_float_status_v2", "npu_get_float_status", "npu_get_float_status_v2",
    "random_choice_with_mask",
]
