"""Calling a user's input_fn and model_fn the way an Estimator does: each gets only the arguments it names
(mode, params, config), and what an input_fn returns (a Dataset, a (features, labels) pair, features alone) is
turned into the tensors the model_fn receives."""
import inspect

import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf2

from npu_bridge.tf1compat.estimator.model_fn import EstimatorSpec


def argument_names(fn):
    """The parameter names `fn` accepts (a functools.partial's bound ones excluded), or None for **kwargs."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        raise TypeError(f"{fn!r} is not a function with a signature") from None
    if any(parameter.kind == parameter.VAR_KEYWORD for parameter in parameters):
        return None
    return [parameter.name for parameter in parameters]


def check_model_fn(model_fn, params):
    """Fail at construction, as TF's Estimator does, for a model_fn without `features` or without `params` while
    params were given."""
    names = argument_names(model_fn)
    if names is not None and "features" not in names:
        raise ValueError(f"model_fn {getattr(model_fn, '__name__', model_fn)!r} must take a 'features' argument "
                         f"(it takes {names})")
    if names is not None and params and "params" not in names:
        raise ValueError(f"model_fn {getattr(model_fn, '__name__', model_fn)!r} does not take 'params', but params "
                         f"{params!r} were passed to the Estimator")


def call_model_fn(model_fn, features, labels, mode, params, config):
    """The EstimatorSpec `model_fn` returns for `mode`, called with the arguments it names."""
    names = argument_names(model_fn)
    offered = {"mode": mode, "params": params, "config": config}
    kwargs = dict(offered) if names is None else {k: v for k, v in offered.items() if k in names}
    if names is None or "labels" in names:
        kwargs["labels"] = labels
    elif labels is not None:
        raise ValueError(f"model_fn {getattr(model_fn, '__name__', model_fn)!r} does not take 'labels', but the "
                         "input_fn returns labels")
    spec = model_fn(features=features, **kwargs)
    if not isinstance(spec, EstimatorSpec):
        raise ValueError(f"model_fn {getattr(model_fn, '__name__', model_fn)!r} must return an EstimatorSpec, "
                         f"got {type(spec).__name__}")
    return spec


class DatasetInitializerHook(tf.train.SessionRunHook):
    """Initializes the input_fn's Dataset iterator once the session exists (so a restored session reads from the
    start of the data, as TF's Estimator does)."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


def features_and_labels(input_fn, mode, params, config):
    """(features, labels, hooks) from `input_fn`: a Dataset is iterated (its initializer run by the hook), a
    (features, labels) tuple or list is split, anything else is the features with no labels."""
    names = argument_names(input_fn)
    offered = {"mode": mode, "params": params, "config": config}
    kwargs = dict(offered) if names is None else {k: v for k, v in offered.items() if k in names}
    with tf.device("/cpu:0"):
        result = input_fn(**kwargs)
    hooks = []
    if isinstance(result, tf2.data.Dataset):     # v1 Datasets are v2 Datasets too
        iterator = tf.data.make_initializable_iterator(result)
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise ValueError(f"input_fn {getattr(input_fn, '__name__', input_fn)!r} must return features, "
                             f"(features, labels) or a Dataset of them; got a {type(result).__name__} of "
                             f"{len(result)} items")
        return result[0], result[1], hooks
    return result, None, hooks
