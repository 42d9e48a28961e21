"""NPULossScaleOptimizer: loss scaling for mixed-precision training on tf.compat.v1.train optimizers.

compute_gradients multiplies the loss by the manager's scale and divides the gradients by it again.
apply_gradients checks the gradients for overflow and applies them inside a tf.cond only when none overflowed,
so an overflowing step changes no weight, no slot and (when apply_gradients increments it) no global step; the
manager's update runs on every step.

What counts as overflow: a non-finite gradient, or the device's overflow status. In INF/NaN mode (910B and later,
or set_device_sat_mode(1)) a float16 overflow is inf, which reaches the gradients. In saturation mode
(first-generation Ascend910, the default soc, or set_device_sat_mode(0)) it is clamped to +-65504 and raised in a
status register: `_float_status` is the emulation's reading of it, an Identity the precision pass wires to the
overflow flags of the float16 results the gradients depend on (core/precision/saturation.py; False when run
without the emulation). A large gradient computed in float32 overflows nothing, on the NPU or here.

With is_distributed=True the overflow decision is shared, as the real optimizer all-reduces its float status:
a step is skipped on every rank when any rank overflowed.
"""
import tensorflow.compat.v1 as tf

from npu_bridge.emulated_ops import gen_npu_ops  # noqa: F401  (scripts import gen_npu_ops from this module)
from npu_bridge.emulated_ops.float_status import overflow_flag
from npu_bridge.estimator.npu.npu_loss_scale_manager import FixedLossScaleManager  # noqa: F401  (imported from here)
from npu_bridge.hccl import hccl_ops
from npu_bridge.hccl.rank import get_rank_size


def _values(grad):
    return grad.values if isinstance(grad, tf.IndexedSlices) else grad


def _scale_grad(grad, factor):
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * tf.cast(factor, grad.values.dtype), grad.indices, grad.dense_shape)
    return grad * tf.cast(factor, grad.dtype)


def _float_status(grads):
    """The device's overflow status after computing `grads` (NPUGetFloatStatus): see the module docstring."""
    return overflow_flag([_values(grad) for grad in grads], "npu_float_status")


class NPULossScaleOptimizer(tf.train.Optimizer):
    """Wrap `opt` with loss scaling driven by `loss_scale_manager`; other attributes go to `opt`."""

    def __init__(self, opt, loss_scale_manager, is_distributed=False):
        if not isinstance(opt, tf.train.Optimizer):
            raise ValueError(f"NPULossScaleOptimizer wraps a tf.compat.v1.train.Optimizer, got {type(opt).__name__}")
        super().__init__(use_locking=False, name="NPULossScaleOptimizer")
        self._opt = opt
        self._loss_scale_manager = loss_scale_manager
        self._is_distributed = is_distributed

    def __getattr__(self, name):
        if name == "_opt":
            raise AttributeError(name)
        return getattr(self._opt, name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=tf.train.Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False, grad_loss=None):
        loss_scale = self._loss_scale_manager.get_loss_scale()
        if callable(loss):
            scaled_loss = lambda: loss() * tf.cast(loss_scale, loss().dtype)  # noqa: E731
        else:
            scaled_loss = loss * tf.cast(loss_scale, loss.dtype)
        grads_and_vars = self._opt.compute_gradients(
            scaled_loss, var_list=var_list, gate_gradients=gate_gradients, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        inverse = tf.reciprocal(tf.cast(loss_scale, tf.float32))
        return [(_scale_grad(g, inverse), v) for g, v in grads_and_vars]

    def _all_finite(self, grads):
        """True when no gradient overflowed (see the module docstring for both device modes)."""
        checks = [tf.reduce_all(tf.is_finite(_values(grad))) for grad in grads]
        if not checks:
            return tf.constant(True)
        finite = tf.reduce_all(tf.stack(checks), name="overflow_status_reduce_all")
        return tf.logical_and(finite, tf.logical_not(_float_status(grads)), name="overflow_status_all_finite")

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        grads = [g for g, _ in grads_and_vars if g is not None]
        if self._loss_scale_manager.enable_overflow_check:
            is_overall_finite = self._all_finite(grads)
            if self._is_distributed and get_rank_size() > 1:
                is_overall_finite = _finite_on_every_rank(is_overall_finite)
        else:
            is_overall_finite = tf.constant(True)

        def apply_fn():
            return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

        update_vars = tf.cond(is_overall_finite, apply_fn, tf.no_op)
        update_scale = self._loss_scale_manager.update_loss_scale(is_overall_finite)
        return tf.group(update_vars, update_scale, name=name or "NPULossScaleOptimizer_apply")

    def get_slot(self, var, name):
        return self._opt.get_slot(var, name)

    def get_slot_names(self):
        return self._opt.get_slot_names()

    def variables(self):
        return self._opt.variables()


def _finite_on_every_rank(is_finite):
    """True when no rank overflowed: the ranks' overflow flags summed over the ranks are 0."""
    overflows = hccl_ops.allreduce(tf.cast(tf.logical_not(is_finite), tf.float32), "sum", fusion=0)
    return tf.equal(overflows, 0.0, name="overflow_status_all_ranks")
