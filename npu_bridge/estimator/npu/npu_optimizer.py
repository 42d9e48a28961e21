"""Distributed-training optimizers of the real adapter, for a one-rank job.

On the NPU these all-reduce (average) the gradients over the HCCL ranks before applying them. With one rank the
average of one gradient is that gradient, so they forward to the wrapped optimizer unchanged; a job with
RANK_SIZE > 1 is refused (npu_bridge.hccl).
"""
import tensorflow.compat.v1 as tf

from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.hccl.rank import check_single_rank


class _ForwardingOptimizer(tf.train.Optimizer):
    """A tf.compat.v1 optimizer that hands every call to the optimizer it wraps."""

    def __init__(self, optimizer, name):
        if not isinstance(optimizer, tf.train.Optimizer):
            raise ValueError(f"{type(self).__name__} wraps a tf.compat.v1.train.Optimizer, "
                             f"got {type(optimizer).__name__}")
        super().__init__(use_locking=False, name=name)
        self._optimizer = optimizer

    def __getattr__(self, name):
        if name == "_optimizer":
            raise AttributeError(name)
        return getattr(self._optimizer, name)

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def variables(self):
        return self._optimizer.variables()


class NPUDistributedOptimizer(_ForwardingOptimizer):
    """All-reduce-averaging wrapper; the identity on the single emulated rank."""

    def __init__(self, optimizer, is_weight_update_sharding=False, name=None):
        check_single_rank("NPUDistributedOptimizer")
        super().__init__(optimizer, name or "NPUDistributedOptimizer")


class NPUOptimizer(_ForwardingOptimizer):
    """The adapter's combined optimizer: optional loss scaling plus (one-rank) gradient all-reduce."""

    def __init__(self, opt, loss_scale_manager=None, is_distributed=False, is_loss_scale=False,
                 is_tailing_optimization=False, name=None):
        if is_distributed:
            check_single_rank("NPUOptimizer(is_distributed=True)")
        if is_loss_scale:
            if loss_scale_manager is None:
                raise ValueError("NPUOptimizer: is_loss_scale=True needs a loss_scale_manager")
            opt = NPULossScaleOptimizer(opt, loss_scale_manager, is_distributed=is_distributed)
        super().__init__(opt, name or "NPUOptimizer")


def npu_distributed_optimizer_wrapper(optimizer):
    """Return `optimizer` itself: the real wrapper patches it to all-reduce gradients, a no-op on one rank."""
    check_single_rank("npu_distributed_optimizer_wrapper")
    return optimizer


def KerasDistributeOptimizer(optimizer, name="NpuKerasOptimizer", **kwargs):
    """The adapter's all-reduce wrapper for a Keras optimizer, which `npu_keras_optimizer` returns and
    `model.compile` takes; with one rank the average of one gradient is that gradient, so it is `optimizer`
    itself (the real class wraps it, forwarding every call)."""
    check_single_rank("KerasDistributeOptimizer")
    return optimizer
