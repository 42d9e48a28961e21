"""tf.contrib.mixed_precision: TF 1.15's loss-scale managers and LossScaleOptimizer.

The managers are npu_bridge's (the real adapter built its NPU managers on these, with the same variables:
`loss_scale`, `good_steps`, `bad_steps`). contrib's optimizer skips a step when a gradient is not finite and
nothing else: unlike NPULossScaleOptimizer it cannot read the NPU's overflow status, so in saturation mode a
clamped float16 overflow goes unnoticed, as it did with this optimizer on an Ascend 910.
"""
import tensorflow as tf

from npu_bridge.estimator.npu.npu_loss_scale_manager import (  # noqa: F401
    ExponentialUpdateLossScaleManager,
    FixedLossScaleManager,
)
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.tf1compat.contrib import removed


class LossScaleOptimizer(NPULossScaleOptimizer):
    """Loss scaling with `loss_scale_manager`; a step whose gradients are not all finite changes nothing."""

    def __init__(self, opt, loss_scale_manager):
        super().__init__(opt, loss_scale_manager)
        self._name = "LossScaleOptimizer"

    def _all_finite(self, grads):
        values = [grad.values if isinstance(grad, tf.IndexedSlices) else grad for grad in grads]
        if not values:
            return tf.constant(True)
        return tf.reduce_all(tf.stack([tf.reduce_all(tf.math.is_finite(value)) for value in values]),
                             name="is_overall_finite")


__getattr__ = removed.module_getattr(__name__)
