"""Distributed-training optimizers of the real adapter: gradients averaged over the HCCL ranks.

Each gradient is all-reduced (summed) over the ranks and divided by the rank count, as the real `allreduce`
helper does; an IndexedSlices gradient is all-gathered (values and indices) instead, its values divided by the
rank count. With one rank the average of one gradient is that gradient, so nothing is added to the graph.
`is_weight_update_sharding` (each rank updates a share of the variables, then broadcasts them) gives the same
variables as averaging everywhere; it is accepted and runs as plain averaging.
"""
import tensorflow.compat.v1 as tf

from npu_bridge import tf_private
from npu_bridge.estimator.npu.npu_loss_scale_optimizer import NPULossScaleOptimizer
from npu_bridge.hccl import hccl_ops
from npu_bridge.hccl.rank import get_rank_size


def allreduce(tensor, average=True):
    """The average (or sum) over the ranks of a gradient: a Tensor, or an IndexedSlices (gathered, not summed)."""
    size = get_rank_size()
    if isinstance(tensor, tf.IndexedSlices):
        values = hccl_ops.allgather(tensor.values, size)
        indices = hccl_ops.allgather(tensor.indices, size)
        if average:
            values = tf.math.divide(values, tf.cast(size, values.dtype))
        return tf.IndexedSlices(values, indices, dense_shape=tensor.dense_shape)
    summed = hccl_ops.allreduce(tensor, "sum")
    return tf.math.divide(summed, tf.cast(size, summed.dtype)) if average else summed


def average_gradients(grads_and_vars, scope):
    """[(averaged grad, var)] under name scope `scope`; the input itself on one rank."""
    grads_and_vars = list(grads_and_vars)
    if get_rank_size() == 1:
        return grads_and_vars
    with tf.name_scope(scope):
        return [(None if grad is None else allreduce(grad), var) for grad, var in grads_and_vars]


def _average_list(grads, scope):
    if get_rank_size() == 1:
        return grads
    with tf.name_scope(scope):
        return [None if grad is None else allreduce(grad) for grad in grads]


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
    """Averages the wrapped optimizer's gradients over the ranks before they are applied."""

    def __init__(self, optimizer, is_weight_update_sharding=False, name=None):
        super().__init__(optimizer, name or f"Distributed{type(optimizer).__name__}")
        self._is_weight_update_sharding = is_weight_update_sharding

    def compute_gradients(self, *args, **kwargs):
        gradients = self._optimizer.compute_gradients(*args, **kwargs)
        return average_gradients(gradients, self._name + "_Allreduce")


class NPUOptimizer(_ForwardingOptimizer):
    """The adapter's combined optimizer: optional loss scaling plus, with is_distributed, gradient averaging."""

    def __init__(self, opt, loss_scale_manager=None, is_distributed=False, is_loss_scale=False,
                 is_tailing_optimization=False, name=None):
        name = name or f"NPUOptimizer{type(opt).__name__}"
        if is_distributed:
            opt = NPUDistributedOptimizer(opt, name=name)
        if is_loss_scale:
            if loss_scale_manager is None:
                raise ValueError("NPUOptimizer: is_loss_scale=True needs a loss_scale_manager")
            opt = NPULossScaleOptimizer(opt, loss_scale_manager, is_distributed=is_distributed)
        super().__init__(opt, name)


def npu_distributed_optimizer_wrapper(optimizer):
    """Patch `optimizer` (a tf.train or Keras optimizer) so the gradients it computes are averaged over the
    ranks, and return it, as the real wrapper does; on one rank it is returned untouched."""
    if get_rank_size() == 1:
        return optimizer
    if hasattr(optimizer, "compute_gradients"):
        compute = optimizer.compute_gradients
        optimizer.compute_gradients = lambda *args, **kwargs: average_gradients(
            compute(*args, **kwargs), "Npu_Distributed_optimizer_Allreduce")
    _patch_keras_gradients(optimizer, "Npu_Distributed_optimizer")
    return optimizer


def _patch_keras_gradients(optimizer, scope):
    """Average the gradients a Keras optimizer computes (get_gradients in TF1 Keras' fit, _compute_gradients in
    minimize)."""
    if hasattr(optimizer, "get_gradients"):
        get_gradients = optimizer.get_gradients
        optimizer.get_gradients = lambda loss, params: _average_list(get_gradients(loss, params),
                                                                     scope + "_get_grads_Allreduce")
    if hasattr(optimizer, tf_private.KERAS_COMPUTE_GRADIENTS):
        compute = getattr(optimizer, tf_private.KERAS_COMPUTE_GRADIENTS)
        setattr(optimizer, tf_private.KERAS_COMPUTE_GRADIENTS, lambda *args, **kwargs: average_gradients(
            compute(*args, **kwargs), scope + "_compute_grads_Allreduce"))


def KerasDistributeOptimizer(optimizer, name="NpuKerasOptimizer", **kwargs):
    """The adapter's all-reduce wrapper for a Keras optimizer, which `npu_keras_optimizer` returns and
    `model.compile` takes: `optimizer` itself, its gradients averaged over the ranks when there are several (the
    real class wraps it, forwarding every call)."""
    if get_rank_size() > 1:
        _patch_keras_gradients(optimizer, name)
    return optimizer
