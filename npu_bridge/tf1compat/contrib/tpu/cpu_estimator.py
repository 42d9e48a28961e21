"""TPUEstimator(use_tpu=False) built on an Estimator without TF's tpu module (npu_bridge's, TensorFlow >= 2.16).

TF 1.15 on a CPU gave model_fn and input_fn params["batch_size"] = the batch size of the mode being run (and
params["use_tpu"] = False) and turned a returned TPUEstimatorSpec into its EstimatorSpec. The Estimator class
here does that around the base Estimator's public train / evaluate / predict, so it works on any Estimator.
"""
import inspect

_classes = {}


def _argument_names(function):
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):     # a builtin or callable without a signature: offer everything
        return {"features", "labels", "mode", "params", "config"}


def _offered(function, **arguments):
    names = _argument_names(function)
    return {name: value for name, value in arguments.items() if name in names}


def _with_batch_size(params, batch_size):
    params = dict(params or {}, use_tpu=False)
    if batch_size is not None:
        params["batch_size"] = batch_size
    return params


def _model_fn(model_fn, batch_sizes):
    def tpu_model_fn(features, labels, mode, params, config):
        spec = model_fn(features, **_offered(model_fn, labels=labels, mode=mode, config=config,
                                              params=_with_batch_size(params, batch_sizes.get(mode))))
        # a TPUEstimatorSpec, ours or TensorFlow's, stands for the EstimatorSpec it converts to
        return spec.as_estimator_spec() if hasattr(spec, "as_estimator_spec") else spec

    return tpu_model_fn


def _input_fn(input_fn, batch_size):
    def tpu_input_fn(mode, params, config):
        return input_fn(**_offered(input_fn, mode=mode, config=config,
                                   params=_with_batch_size(params, batch_size)))

    return tpu_input_fn


def _estimator_class(base):
    """`base` (the Estimator class) with each mode's input_fn given that mode's batch size."""
    found = _classes.get(base)
    if found is not None:
        return found

    class TPUEstimator(base):
        def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
            return super().train(_input_fn(input_fn, self._tpu_batch_sizes["train"]), hooks=hooks, steps=steps,
                                 max_steps=max_steps, saving_listeners=saving_listeners)

        def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
            return super().evaluate(_input_fn(input_fn, self._tpu_batch_sizes["eval"]), steps=steps, hooks=hooks,
                                    checkpoint_path=checkpoint_path, name=name)

        def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                    yield_single_examples=True):
            return super().predict(_input_fn(input_fn, self._tpu_batch_sizes["infer"]), predict_keys=predict_keys,
                                   hooks=hooks, checkpoint_path=checkpoint_path,
                                   yield_single_examples=yield_single_examples)

    TPUEstimator.__module__ = "npu_bridge.tf1compat.contrib.tpu"
    _classes[base] = TPUEstimator
    return TPUEstimator


def build(estimator, model_fn, model_dir, config, params, batch_sizes, warm_start_from):
    """A TPUEstimator running `model_fn` on the CPU with `estimator` (the tf.compat.v1.estimator module)."""
    instance = _estimator_class(estimator.Estimator)(
        model_fn=_model_fn(model_fn, batch_sizes), model_dir=model_dir, config=config, params=params,
        warm_start_from=warm_start_from)
    instance._tpu_batch_sizes = batch_sizes
    return instance
