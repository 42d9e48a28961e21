"""tf.contrib.opt.ScipyOptimizerInterface: TF 1.15's wrapper minimising a graph's loss with scipy.optimize.minimize.

The variables (var_list, or every trainable variable) are packed into one float vector; scipy calls back for the
loss and its packed gradient (tf.gradients, zeros where a variable does not reach the loss) and for each equality
/ inequality constraint and its gradient, and at the end the variables are assigned the optimum. Defaults and
checks are TF 1.15's: method L-BFGS-B, jac / callback / method / constraints / bounds set by the interface (bounds
come from var_to_bounds, a (low, high) per variable broadcast to its shape), everything else in
**optimizer_kwargs (options={'maxiter': ...}, ...) passed to scipy as it is; loss_callback gets the extra fetches'
values at each evaluation, step_callback the packed vector after each step. Two differences: each evaluation
assigns the point to the variables instead of feeding it (so resource variables work as well as TF 1.15's ref
variables; during minimize() the variables hold the point last evaluated), and the values handed to scipy are
float64 (current scipy's solvers refuse the float32 ones TF 1.15 passed). scipy is imported only by
minimize(); without it minimize() raises an ImportError naming scipy.
"""
import logging

import numpy as np
import tensorflow as tf

_v1 = tf.compat.v1
_LOG = logging.getLogger(__name__)


def _gradients(tensor, var_list):
    grads = tf.gradients(tensor, var_list)
    return [tf.zeros_like(var) if grad is None else grad for var, grad in zip(var_list, grads)]


def _pack(tensors):
    """The tensors flattened and concatenated into one vector (None for none)."""
    if not tensors:
        return None
    flat = [tf.reshape(tensor, [-1]) for tensor in tensors]
    return flat[0] if len(flat) == 1 else tf.concat(flat, 0)


class ExternalOptimizerInterface:
    """Base of TF 1.15's external optimizers: packs the variables, builds the gradients, runs the evaluations;
    subclasses implement _minimize (see the module)."""

    def __init__(self, loss, var_list=None, equalities=None, inequalities=None, var_to_bounds=None,
                 **optimizer_kwargs):
        self._loss = loss
        self._equalities = list(equalities or [])
        self._inequalities = list(inequalities or [])
        self._vars = _v1.trainable_variables() if var_list is None else list(var_list)
        if not self._vars:
            raise ValueError("ScipyOptimizerInterface: no variables to optimize (var_list is empty and the graph "
                             "has no trainable variables)")
        self._shapes = [tuple(var.get_shape().as_list()) for var in self._vars]
        for var, shape in zip(self._vars, self._shapes):
            if None in shape:
                raise ValueError(f"ScipyOptimizerInterface: {var.name} needs a fully known shape, got {shape}")
        self._packed_bounds = self._bounds(var_to_bounds)
        self._placeholders = [_v1.placeholder(var.dtype.base_dtype) for var in self._vars]
        self._assign = tf.group(*[_v1.assign(var, tf.reshape(placeholder, shape))
                                  for var, placeholder, shape in zip(self._vars, self._placeholders, self._shapes)])
        self.optimizer_kwargs = optimizer_kwargs
        self._packed_var = _pack([tf.convert_to_tensor(var) for var in self._vars])
        self._packed_loss_grad = _pack(_gradients(loss, self._vars))
        self._packed_equality_grads = [_pack(_gradients(equality, self._vars)) for equality in self._equalities]
        self._packed_inequality_grads = [_pack(_gradients(inequality, self._vars))
                                         for inequality in self._inequalities]
        ends = np.cumsum([0] + [int(np.prod(shape)) for shape in self._shapes])
        self._slices = [slice(start, end) for start, end in zip(ends[:-1], ends[1:])]

    def _bounds(self, var_to_bounds):
        if var_to_bounds is None:
            return None
        low, high = [], []
        for var, shape in zip(self._vars, self._shapes):
            bounds = var_to_bounds.get(var, (-np.inf, np.inf))
            low.extend(np.broadcast_to(bounds[0], shape).flat)
            high.extend(np.broadcast_to(bounds[1], shape).flat)
        return list(zip(low, high))

    def minimize(self, session=None, feed_dict=None, fetches=None, step_callback=None, loss_callback=None,
                 **run_kwargs):
        """Minimise the loss from the variables' current values and assign them the optimum."""
        session = session or _v1.get_default_session()
        if session is None:
            raise ValueError("ScipyOptimizerInterface.minimize: pass a session or call it inside `with session:`")
        feed_dict, fetches = feed_dict or {}, list(fetches or [])
        loss_callback = loss_callback or (lambda *values: None)
        step_callback = step_callback or (lambda xk: None)
        loss_grad = self._evaluator([self._loss, self._packed_loss_grad], session, feed_dict, fetches, loss_callback)

        def evaluators(tensors):
            return [self._evaluator([tensor], session, feed_dict, fetches) for tensor in tensors]

        optimum = self._minimize(
            initial_val=session.run(self._packed_var), loss_grad_func=loss_grad,
            equality_funcs=evaluators(self._equalities), equality_grad_funcs=evaluators(self._packed_equality_grads),
            inequality_funcs=evaluators(self._inequalities),
            inequality_grad_funcs=evaluators(self._packed_inequality_grads), packed_bounds=self._packed_bounds,
            step_callback=step_callback, optimizer_kwargs=self.optimizer_kwargs)
        session.run(self._assign, feed_dict=self._point_feed(optimum), **run_kwargs)

    def _point_feed(self, x):
        return {placeholder: np.asarray(x[piece]) for placeholder, piece in zip(self._placeholders, self._slices)}

    def _evaluator(self, tensors, session, feed_dict, fetches, callback=None):
        """A function of the packed point x giving the tensors' values there (the extra fetches to callback)."""
        def evaluate(x):
            session.run(self._assign, feed_dict=self._point_feed(x))
            values = session.run(tensors + fetches, feed_dict=feed_dict)
            if callback is not None:
                callback(*values[len(tensors):])
            return values[:len(tensors)]

        return evaluate

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs, inequality_funcs,
                  inequality_grad_funcs, packed_bounds, step_callback, optimizer_kwargs):
        raise NotImplementedError(f"{type(self).__name__}._minimize")


class ScipyOptimizerInterface(ExternalOptimizerInterface):
    """Minimise with scipy.optimize.minimize (default method L-BFGS-B); see the module."""

    _DEFAULT_METHOD = "L-BFGS-B"

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs, inequality_funcs,
                  inequality_grad_funcs, packed_bounds, step_callback, optimizer_kwargs):
        def loss_and_gradient(x):
            loss, gradient = loss_grad_func(x)
            return np.float64(loss), gradient.astype(np.float64)     # scipy's Fortran / C solvers take float64

        def in_float64(function):
            return lambda x: np.asarray(function(x), np.float64)

        options = dict(optimizer_kwargs)
        method = options.pop("method", self._DEFAULT_METHOD)
        if "bounds" in options:
            raise ValueError("ScipyOptimizerInterface: bounds must be set with the var_to_bounds argument")
        for reserved in ("jac", "callback", "method", "constraints"):
            if reserved in options:
                raise ValueError(f"ScipyOptimizerInterface: the scipy argument {reserved!r} is set by the "
                                 f"interface and cannot be passed")
        constraints = [{"type": kind, "fun": in_float64(f), "jac": in_float64(g)}
                       for kind, funcs, grads in (("eq", equality_funcs, equality_grad_funcs),
                                                  ("ineq", inequality_funcs, inequality_grad_funcs))
                       for f, g in zip(funcs, grads)]
        try:
            import scipy.optimize
        except ImportError as missing:
            raise ImportError("tf.contrib.opt.ScipyOptimizerInterface.minimize needs scipy, which is not "
                              "installed: pip install scipy") from missing
        result = scipy.optimize.minimize(loss_and_gradient, np.asarray(initial_val, np.float64), jac=True, callback=step_callback,
                                         method=method, constraints=constraints, bounds=packed_bounds, **options)
        _LOG.info("Optimization terminated with:\n  Message: %s\n  Objective function value: %f\n  Number of "
                  "iterations: %s\n  Number of functions evaluations: %s", result.message, result.fun,
                  getattr(result, "nit", "n/a"), getattr(result, "nfev", "n/a"))
        return result["x"]
