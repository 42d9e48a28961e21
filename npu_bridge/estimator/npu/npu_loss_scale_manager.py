"""Loss-scale managers of the real adapter, rebuilt on TF 2.x (TF1 built them on tf.contrib, which is gone).

A manager owns the loss scale and updates it from a per-step "all gradients finite" flag:
- FixedLossScaleManager: constant scale; `enable_overflow_check=False` lets every step apply.
- ExponentialUpdateLossScaleManager: after `incr_every_n_steps` finite steps in a row the scale is multiplied by
  `incr_ratio` (unless that would pass 3.4e38 / incr_ratio); after `decr_every_n_nan_or_inf` overflowing steps,
  in a row or not (finite steps between them do not reset the count, as in tf.contrib's manager), it is
  multiplied by `decr_ratio`, never below 1. Either change resets both counts. The scale is a variable named
  `loss_scale` (tensor `loss_scale:0`, which NPU scripts fetch and log).
Like the real classes, the exponential manager accepts any numbers; values that make the scale move the wrong
way (an `incr_ratio` below 1, often a `decr_ratio` passed as the fourth positional argument) get a warning.
"""
import tensorflow.compat.v1 as tf

from npu_bridge.artifacts import loss_scaling
from npu_bridge.core.options import config_warning
from npu_bridge.settings import core_settings

_FLOAT32_MAX = 3.4e38


class FixedLossScaleManager:
    """A constant loss scale."""

    def __init__(self, loss_scale, enable_overflow_check=True):
        if loss_scale < 1:
            raise ValueError("loss scale must be at least 1.")
        # Made here, as the real class does: scripts log it by name (get_tensor_by_name("loss_scale:0")).
        self._loss_scale = tf.convert_to_tensor(loss_scale, dtype=tf.float32, name="loss_scale")
        self._enable_overflow_check = bool(enable_overflow_check)

    @property
    def enable_overflow_check(self):
        return self._enable_overflow_check

    def get_enable_overflow_check(self):
        return self._enable_overflow_check

    def get_loss_scale(self):
        return self._loss_scale

    def update_loss_scale(self, finite_grads):
        update = tf.no_op(name="fixed_loss_scale_update")
        _register(self._loss_scale.name, self._loss_scale, finite_grads, update)
        return update


class ExponentialUpdateLossScaleManager:
    """A loss scale that grows after runs of finite steps and shrinks after overflowing ones."""

    def __init__(self, init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf=2, incr_ratio=2,
                 decr_ratio=0.8):
        _warn_about_arguments(init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf, incr_ratio, decr_ratio)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        # init_scope: the variables must not inherit control dependencies or a cond context from the caller
        # (building the manager inside tf.control_dependencies is a known failure on the NPU).
        with tf.init_scope(), tf.name_scope(None):
            self._loss_scale = tf.Variable(float(init_loss_scale), dtype=tf.float32, trainable=False,
                                           name="loss_scale")
            self._num_good_steps = tf.Variable(0, dtype=tf.int32, trainable=False, name="good_steps")
            self._num_bad_steps = tf.Variable(0, dtype=tf.int32, trainable=False, name="bad_steps")

    @property
    def enable_overflow_check(self):
        return True

    def get_enable_overflow_check(self):
        return True

    def get_loss_scale(self):
        return self._loss_scale

    def update_loss_scale(self, finite_grads):
        """Ops updating the scale and the good/bad step counters from the boolean `finite_grads`."""
        with tf.name_scope("update_loss_scale"):
            scale = tf.identity(self._loss_scale)
            good = tf.where(finite_grads, self._num_good_steps + 1, 0)
            bad = tf.where(finite_grads, self._num_bad_steps, self._num_bad_steps + 1)
            grow = tf.logical_and(finite_grads, good >= self._incr_every_n_steps)
            shrink = tf.logical_and(tf.logical_not(finite_grads), bad >= self._decr_every_n_nan_or_inf)
            grown = scale * self._incr_ratio
            grown = tf.where(grown <= _FLOAT32_MAX / self._incr_ratio, grown, scale)
            shrunk = tf.maximum(scale * self._decr_ratio, 1.0)
            new_scale = tf.where(grow, grown, tf.where(shrink, shrunk, scale))
            reset = tf.logical_or(grow, shrink)
            new_good = tf.where(reset, 0, good)
            new_bad = tf.where(reset, 0, bad)
            with tf.control_dependencies([new_scale, new_good, new_bad]):
                update = tf.group(
                    tf.assign(self._loss_scale, new_scale),
                    tf.assign(self._num_good_steps, new_good),
                    tf.assign(self._num_bad_steps, new_bad),
                )
        _register(self._loss_scale.name, self._loss_scale, finite_grads, update)
        return update


def _register(name, scale, finite_grads, update):
    """Tell the run record (npu-run --report-dir) which tensors hold this step's scale and overflow verdict."""
    finite_grads = tf.convert_to_tensor(finite_grads)
    loss_scaling.register(update.graph, name, scale.name, finite_grads.name, update.name)


def _warn_about_arguments(init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf, incr_ratio, decr_ratio):
    """The real manager takes these as given; say when they move the scale the wrong way or every step."""
    problems = []
    if init_loss_scale < 1:
        problems.append(f"init_loss_scale {init_loss_scale} is below 1, so it shrinks the loss instead of protecting "
                        "float16 gradients")
    if incr_ratio < 1:
        problems.append(f"incr_ratio {incr_ratio} is below 1, so good steps lower the scale (the arguments are "
                        "(init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf, incr_ratio, decr_ratio): "
                        "a decr_ratio passed fourth lands in incr_ratio)")
    if not 0 < decr_ratio <= 1:
        problems.append(f"decr_ratio {decr_ratio} is not in (0, 1], so overflows do not lower the scale")
    if incr_every_n_steps < 1 or decr_every_n_nan_or_inf < 1:
        problems.append(f"incr_every_n_steps {incr_every_n_steps} / decr_every_n_nan_or_inf "
                        f"{decr_every_n_nan_or_inf}: below 1 changes the scale on every such step")
    for problem in problems:
        config_warning(f"ExponentialUpdateLossScaleManager: {problem}; the real manager accepts it silently.",
                       strict=core_settings().strict)
