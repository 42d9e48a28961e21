"""TF 1.15's contrib.opt.MovingAverageOptimizer: an optimizer whose train op also updates an exponential moving
average of every trained variable, and a saver that swaps each variable with its average, so a checkpoint holds
the averaged weights under the variables' own names (what evaluation restores)."""
import tensorflow as tf

v1 = tf.compat.v1


class MovingAverageOptimizer(v1.train.Optimizer):
    """Wraps `opt`: apply_gradients runs opt's update, then (or alongside, without sequential_update) the
    ExponentialMovingAverage(average_decay, num_updates) of the updated variables."""

    def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
        super().__init__(use_locking=False, name="MovingAverageOptimizer")
        self._optimizer = opt
        self._ema = v1.train.ExponentialMovingAverage(average_decay, num_updates=num_updates)
        self._sequential_update = sequential_update
        self._swapped_names = None

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        train_op = self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)
        variables = [variable for gradient, variable in grads_and_vars if gradient is not None]
        with tf.control_dependencies([train_op] if self._sequential_update else []):
            average_op = self._ema.apply(variables)
        self._swapped_names = {}
        for variable in variables:
            average_name = self._ema.average(variable).op.name
            self._swapped_names[variable.op.name] = average_name
            self._swapped_names[average_name] = variable.op.name
        return tf.group(train_op, average_op, name="train_with_avg")

    def swapping_saver(self, var_list=None, name="swapping_saver", **kwargs):
        """A Saver that writes each variable under its average's checkpoint name and the average under the
        variable's, so restoring gives the variables their averaged values."""
        if self._swapped_names is None:
            raise RuntimeError("MovingAverageOptimizer.swapping_saver: call apply_gradients or minimize first, "
                               "which creates the averages it swaps in")
        if var_list is None:
            var_list = v1.global_variables()
        if not isinstance(var_list, dict):
            var_list = {variable.op.name: variable for variable in var_list}
        swapped = {self._swapped_names.get(key, key): variable for key, variable in var_list.items()}
        return v1.train.Saver(swapped, name=name, **kwargs)
