"""tf.contrib.estimator: clip_gradients_by_norm, the one name of it ported scripts use."""
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


class _ClipByNorm(tf.compat.v1.train.Optimizer):
    """An optimizer whose gradients are clipped to a global norm before the wrapped optimizer applies them."""

    def __init__(self, optimizer, clip_norm):
        super().__init__(use_locking=False, name=f"ClipByNorm{optimizer.get_name()}")
        self._optimizer = optimizer
        self._clip_norm = clip_norm

    def compute_gradients(self, *args, **kwargs):
        grads_and_vars = self._optimizer.compute_gradients(*args, **kwargs)
        grads, variables = zip(*grads_and_vars)
        clipped, _ = tf.clip_by_global_norm(grads, self._clip_norm)
        return list(zip(clipped, variables))

    def apply_gradients(self, *args, **kwargs):
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._optimizer.variables()


def clip_gradients_by_norm(optimizer, clip_norm):
    """`optimizer` with its gradients clipped to global norm `clip_norm` (tf.clip_by_global_norm), as TF 1.15's
    wrapper named ClipByNorm<name> did."""
    return _ClipByNorm(optimizer, clip_norm)


__getattr__ = removed.module_getattr(__name__)
