"""tf.contrib.training.HParams (TF 1.15's parsing and type rules) and tf.contrib.tpu's TPUEstimator run with
use_tpu=False as an Estimator, as BERT-family ports run it."""
import numpy as np
import pytest
import tensorflow as tf


v1 = tf.compat.v1


pytestmark = pytest.mark.usefixtures("installed")


def _hparams(**values):
    from tensorflow.contrib.training import HParams

    return HParams(**values)


def test_hparams_parse_casts_as_tf115_did():
    hparams = _hparams(learning_rate=0.1, num_layers=2, use_bn=True, name="bert", sizes=[1, 2])
    hparams.parse("learning_rate=3, num_layers=4,use_bn=false,name=base,sizes=[5,6,7]")
    assert (hparams.learning_rate, hparams.num_layers, hparams.use_bn, hparams.name, hparams.sizes) == \
        (3.0, 4, False, "base", [5, 6, 7])
    assert isinstance(hparams.learning_rate, float)
    assert hparams.values() == {"learning_rate": 3.0, "num_layers": 4, "use_bn": False, "name": "base",
                                "sizes": [5, 6, 7]}
    assert str(_hparams(b=1, a=2)) == "[('a', 2), ('b', 1)]"


@pytest.mark.parametrize("text, message", [
    ("num_layers=2.5", "Could not parse hparam 'num_layers' of type 'int'"),
    ("unknown=1", "Unknown hyperparameter type for unknown"),
    ("num_layers=1,num_layers=2", "Multiple assignments to variable 'num_layers'"),
    ("num_layers", "Malformed hyperparameter value"),
])
def test_hparams_parse_rejects_what_tf115_rejected(text, message):
    with pytest.raises(ValueError, match=message):
        _hparams(num_layers=2).parse(text)


def test_hparams_set_json_and_type_rules():
    hparams = _hparams(rate=0.5, steps=10, flag=False)
    with pytest.raises(ValueError, match="Could not cast hparam 'steps' of type 'int' from value 1.5"):
        hparams.set_hparam("steps", 1.5)
    with pytest.raises(ValueError, match="Could not cast hparam 'flag'"):
        hparams.set_hparam("flag", 1)
    with pytest.raises(ValueError, match="reserved"):
        hparams.add_hparam("parse", 1)
    hparams.add_hparam("extra", "x")
    restored = _hparams(rate=0.0, steps=0, flag=True, extra="")
    restored.parse_json(hparams.to_json())
    assert restored.values() == hparams.values() and "extra" in restored
    assert hparams.get("missing", 7) == 7 and hparams.get("steps") == 10


def _model_fn(features, labels, mode, params):
    tpu = v1.contrib.tpu
    logits = v1.contrib.layers.fully_connected(features["x"], 1, activation_fn=None)
    # TF 1.15 gave model_fn the mode's batch size; the batch really has that many rows
    assert params["batch_size"] == int(features["x"].shape[0]), params
    if mode == "infer":
        return tpu.TPUEstimatorSpec(mode, predictions={"y": logits})
    loss = v1.losses.mean_squared_error(labels, logits)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=v1.train.get_global_step())

    def metric_fn(labels, logits):
        return {"mse": v1.metrics.mean_squared_error(labels, logits)}

    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits]))


def _input_fn(params):
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(64, 1)
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).repeat()
    return dataset.batch(params["batch_size"], drop_remainder=True)


def _estimator(tmp_path, builder=None):
    tpu = v1.contrib.tpu
    config = tpu.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=20,
                           tpu_config=tpu.TPUConfig(iterations_per_loop=10, num_shards=8,
                                                    per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2))
    arguments = {"model_fn": _model_fn, "config": config, "params": {}, "train_batch_size": 8,
                 "eval_batch_size": 4, "predict_batch_size": 2}
    return (builder or tpu.TPUEstimator)(use_tpu=False, **arguments)


def _needs_estimator():
    from npu_bridge.tf1compat.contrib import estimator_lookup

    try:
        return estimator_lookup.estimator_module("tpu.TPUEstimator")
    except ImportError:
        pytest.skip("this TensorFlow has no tf.compat.v1.estimator yet")


def _train_evaluate_predict(estimator):
    estimator.train(_input_fn, max_steps=40)
    metrics = estimator.evaluate(_input_fn, steps=2)
    predictions = [next(estimator.predict(_input_fn, yield_single_examples=False))]
    return metrics, predictions


def test_tpu_estimator_with_use_tpu_false_trains_evaluates_and_predicts(tmp_path):
    _needs_estimator()
    metrics, predictions = _train_evaluate_predict(_estimator(tmp_path))
    assert metrics["global_step"] == 40 and metrics["loss"] < 0.5
    assert metrics["mse"] == pytest.approx(metrics["loss"], rel=1e-4)
    assert predictions[0]["y"].shape == (2, 1)


def test_the_cpu_path_on_any_estimator_gives_the_same_run(tmp_path):
    estimator = _needs_estimator()
    from npu_bridge.tf1compat.contrib.tpu import cpu_estimator

    def cpu_path(use_tpu, model_fn, config, params, train_batch_size, eval_batch_size, predict_batch_size):
        batch_sizes = {"train": train_batch_size, "eval": eval_batch_size, "infer": predict_batch_size}
        return cpu_estimator.build(estimator, model_fn, None, config, params, batch_sizes, None)

    metrics, predictions = _train_evaluate_predict(_estimator(tmp_path, cpu_path))
    assert metrics["global_step"] == 40 and metrics["mse"] < 0.5
    assert predictions[0]["y"].shape == (2, 1)


def test_use_tpu_true_is_a_clear_error():
    with pytest.raises(ValueError, match="no TPU"):
        v1.contrib.tpu.TPUEstimator(model_fn=_model_fn, use_tpu=True)


def test_tpu_names_on_a_cpu_path():
    from tensorflow.contrib.tpu.python.tpu import tpu_function

    assert tpu_function.get_tpu_context().number_of_shards is None
    assert v1.contrib.tpu.InputPipelineConfig.PER_HOST_V2 == 3
    assert v1.contrib.learn.ModeKeys.INFER == "infer" and v1.contrib.learn.ModeKeys.TRAIN == "train"
    assert v1.contrib.cluster_resolver.TPUClusterResolver is tf.distribute.cluster_resolver.TPUClusterResolver
