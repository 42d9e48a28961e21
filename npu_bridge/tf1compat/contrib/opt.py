"""tf.contrib.opt: the optimizers ported scripts use, rebuilt on tf.compat.v1.train with TF 1.15's update rules,
slot names and default names, so training steps and checkpoints match TF 1.15's.

- LazyAdamOptimizer ("LazyAdam"): Adam; for sparse gradients only the rows present are updated (m, v and var).
- NadamOptimizer ("Nadam"): Adam with Nesterov momentum (TF's ApplyAdam with use_nesterov=True).
- AdamWOptimizer ("AdamW"), MomentumWOptimizer ("MomentumW"): decoupled weight decay, var -= weight_decay * var
  before each update (Loshchilov & Hutter), on the variables of decay_var_list (all by default).
- LARSOptimizer ("LARSOptimizer"): momentum with a layer-wise trust ratio eeta * |w| / (|g| + wd * |w| + eps).
- ScipyOptimizerInterface / ExternalOptimizerInterface: scipy.optimize.minimize on the graph's loss
  (contrib.external_optimizer; scipy imported only when minimize() runs).
"""
import tensorflow as tf
from tensorflow.python.ops import gen_training_ops

from npu_bridge import tf_private
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.external_optimizer import (  # noqa: F401
    ExternalOptimizerInterface,
    ScipyOptimizerInterface,
)
from npu_bridge.tf1compat.contrib.moving_average_optimizer import MovingAverageOptimizer  # noqa: F401

_v1 = tf.compat.v1


class _AdamTensors:
    """Adam's hyperparameters and bias-corrected learning rate, cast to one variable's dtype."""

    def __init__(self, optimizer, var):
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = tf_private.adam_beta_powers(optimizer)
        beta1, beta2, epsilon, lr = tf_private.adam_hyper_tensors(optimizer)
        self.beta1_power = tf.cast(beta1_power, dtype)
        self.beta2_power = tf.cast(beta2_power, dtype)
        self.beta1 = tf.cast(beta1, dtype)
        self.beta2 = tf.cast(beta2, dtype)
        self.epsilon = tf.cast(epsilon, dtype)
        self.lr = tf.cast(lr, dtype) * tf.sqrt(1 - self.beta2_power) / (1 - self.beta1_power)


class LazyAdamOptimizer(_v1.train.AdamOptimizer):
    """Adam whose sparse updates touch only the rows of the gradient (TF 1.15's contrib.opt.LazyAdamOptimizer)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="LazyAdam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _lazy_update(self, values, var, indices):
        t = _AdamTensors(self, var)
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        m_t = _v1.scatter_update(m, indices, t.beta1 * tf.gather(m, indices) + (1 - t.beta1) * values,
                                 use_locking=self._use_locking)
        v_t = _v1.scatter_update(v, indices, t.beta2 * tf.gather(v, indices) + (1 - t.beta2) * tf.square(values),
                                 use_locking=self._use_locking)
        step = t.lr * tf.gather(m_t, indices) / (tf.sqrt(tf.gather(v_t, indices)) + t.epsilon)
        return tf.group(_v1.scatter_sub(var, indices, step, use_locking=self._use_locking), m_t, v_t)

    def _apply_sparse(self, grad, var):
        return self._lazy_update(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._lazy_update(grad, var, indices)


class NadamOptimizer(_v1.train.AdamOptimizer):
    """Adam with Nesterov momentum (Dozat 2016), TF 1.15's contrib.opt.NadamOptimizer."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="Nadam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _adam_arguments(self, grad, var):
        t = _AdamTensors(self, var)
        dtype = var.dtype.base_dtype
        return {"beta1_power": t.beta1_power, "beta2_power": t.beta2_power, "lr": tf.cast(self._lr_t, dtype),
                "beta1": t.beta1, "beta2": t.beta2, "epsilon": t.epsilon, "grad": grad,
                "use_locking": self._use_locking, "use_nesterov": True}

    def _apply_dense(self, grad, var):
        return gen_training_ops.apply_adam(var, self.get_slot(var, "m"), self.get_slot(var, "v"),
                                           **self._adam_arguments(grad, var))

    def _resource_apply_dense(self, grad, var):
        return gen_training_ops.resource_apply_adam(var.handle, self.get_slot(var, "m").handle,
                                                    self.get_slot(var, "v").handle,
                                                    **self._adam_arguments(grad, var))

    def _nesterov_sparse(self, values, var, indices):
        t = _AdamTensors(self, var)
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        m_scaled = values * (1 - t.beta1)
        with tf.control_dependencies([_v1.assign(m, m * t.beta1, use_locking=self._use_locking)]):
            m_t = _v1.scatter_add(m, indices, m_scaled, use_locking=self._use_locking)
            m_bar = m_scaled + t.beta1 * tf.gather(m_t, indices)
        with tf.control_dependencies([_v1.assign(v, v * t.beta2, use_locking=self._use_locking)]):
            v_t = _v1.scatter_add(v, indices, tf.square(values) * (1 - t.beta2), use_locking=self._use_locking)
        step = -t.lr * m_bar / (tf.sqrt(tf.gather(v_t, indices)) + t.epsilon)
        return tf.group(_v1.scatter_add(var, indices, step, use_locking=self._use_locking), m_bar, v_t)

    def _apply_sparse(self, grad, var):
        return self._nesterov_sparse(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._nesterov_sparse(grad, var, indices)


class _DecoupledWeightDecay:
    """Mixin: var -= weight_decay * var before the wrapped optimizer's update, for the variables of
    decay_var_list (every variable when it is None)."""

    def __init__(self, weight_decay, **kwargs):
        self._decay = weight_decay
        self._decay_var_list = None
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=_v1.train.Optimizer.GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None, grad_loss=None,
                 decay_var_list=None):
        self._decay_var_list = set(decay_var_list) if decay_var_list else None
        return super().minimize(loss, global_step=global_step, var_list=var_list, gate_gradients=gate_gradients,
                                aggregation_method=aggregation_method, name=name, grad_loss=grad_loss,
                                colocate_gradients_with_ops=colocate_gradients_with_ops)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None, decay_var_list=None):
        if decay_var_list:
            self._decay_var_list = set(decay_var_list)
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        decay = self._decay() if callable(self._decay) else self._decay
        self._decay_tensor = tf.convert_to_tensor(decay, name="weight_decay")
        super()._prepare()

    def _decay_op(self, var):
        if self._decay_var_list is not None and var not in self._decay_var_list:
            return tf.no_op()
        return _v1.assign_sub(var, tf.cast(self._decay_tensor, var.dtype.base_dtype) * var,
                              use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay_op(var)]):
            return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay_op(var)]):
            return super()._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with tf.control_dependencies([self._decay_op(var)]):
            return super()._apply_sparse(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        with tf.control_dependencies([self._decay_op(var)]):
            return super()._resource_apply_sparse(grad, var, indices)


class AdamWOptimizer(_DecoupledWeightDecay, _v1.train.AdamOptimizer):
    """Adam with decoupled weight decay (TF 1.15's contrib.opt.AdamWOptimizer)."""

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="AdamW"):
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon,
                         use_locking=use_locking, name=name)


class MomentumWOptimizer(_DecoupledWeightDecay, _v1.train.MomentumOptimizer):
    """Momentum with decoupled weight decay (TF 1.15's contrib.opt.MomentumWOptimizer)."""

    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False, name="MomentumW",
                 use_nesterov=False):
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum, use_locking=use_locking,
                         name=name, use_nesterov=use_nesterov)


class LARSOptimizer(_v1.train.Optimizer):
    """Layer-wise adaptive rate scaling (You et al. 2017) on momentum, TF 1.15's contrib.opt.LARSOptimizer: slot
    `momentum`; variables whose name contains an entry of skip_list get neither the trust ratio nor the decay."""

    def __init__(self, learning_rate, momentum=0.9, weight_decay=0.0001, eeta=0.001, epsilon=0.0,
                 name="LARSOptimizer", skip_list=None, use_nesterov=False):
        if momentum < 0.0:
            raise ValueError(f"LARSOptimizer: momentum must be >= 0, got {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"LARSOptimizer: weight_decay must be >= 0, got {weight_decay}")
        super().__init__(use_locking=False, name=name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._weight_decay = weight_decay
        self._eeta = eeta
        self._epsilon = epsilon
        self._skip_list = skip_list
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, "momentum", self._name)

    def compute_lr(self, grad, var):
        """The scaled learning rate and the gradient with the weight decay added, for `var`."""
        learning_rate = self._learning_rate() if callable(self._learning_rate) else self._learning_rate
        if self._skip_list is not None and any(name in var.name for name in self._skip_list):
            return learning_rate, grad
        w_norm = tf.norm(var, ord=2)
        g_norm = tf.norm(grad, ord=2)
        trust_ratio = tf.where(
            tf.greater(w_norm, 0),
            tf.where(tf.greater(g_norm, 0),
                     self._eeta * w_norm / (g_norm + self._weight_decay * w_norm + self._epsilon), 1.0),
            1.0)
        return learning_rate * trust_ratio, grad + self._weight_decay * var

    def _apply_dense(self, grad, var):
        scaled_lr, grad = self.compute_lr(grad, var)
        return gen_training_ops.apply_momentum(
            var, self.get_slot(var, "momentum"), tf.cast(1.0, var.dtype.base_dtype), grad * scaled_lr,
            self._momentum, use_locking=False, use_nesterov=self._use_nesterov)

    def _resource_apply_dense(self, grad, var):
        scaled_lr, grad = self.compute_lr(grad, var)
        return gen_training_ops.resource_apply_momentum(
            var.handle, self.get_slot(var, "momentum").handle, tf.cast(1.0, var.dtype.base_dtype),
            grad * scaled_lr, self._momentum, use_locking=False, use_nesterov=self._use_nesterov)


__getattr__ = removed.module_getattr(__name__)
