"""tf.estimator as ported scripts use it, run against npu_bridge's Estimator (every TensorFlow) and, where it still
exists (TensorFlow 2.15), TensorFlow's own: the same test, so the two behave alike. Both train the same graph
from the same zero-initialized weights, so their results must agree to the last bit."""
import importlib
import os

import numpy as np
import pytest
import tensorflow as tf

from npu_bridge import tf1compat
from npu_bridge.tf1compat.estimator_paths import tensorflow_has_estimator

v1 = tf.compat.v1
TRUE_W = np.array([[1.0], [-2.0], [0.5]], np.float32)
X = np.random.RandomState(0).randn(64, 3).astype(np.float32)
Y = X @ TRUE_W


@pytest.fixture(params=["npu_bridge", "tensorflow"])
def estimator_lib(request):
    """The tf.estimator module under test."""
    if request.param == "tensorflow":
        if not tensorflow_has_estimator():
            pytest.skip("TensorFlow's own tf.estimator exists up to TensorFlow 2.15")
        return v1.estimator
    return importlib.import_module("npu_bridge.tf1compat.estimator")


def dataset_input_fn(batch=16, repeat=True):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return (dataset.repeat() if repeat else dataset).batch(batch)
    return input_fn


def model_fn_for(lib, learning_rate=0.1):
    def model_fn(features, labels, mode, params):
        kernel = v1.get_variable("kernel", [3, 1], initializer=v1.zeros_initializer())
        prediction = tf.matmul(features["x"], kernel)
        predictions = {"y": prediction, "double": 2.0 * prediction}
        if mode == lib.ModeKeys.PREDICT:
            return lib.EstimatorSpec(mode, predictions=predictions)
        loss = v1.losses.mean_squared_error(labels, prediction)
        if mode == lib.ModeKeys.EVAL:
            return lib.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "mae": v1.metrics.mean_absolute_error(labels, prediction)})
        train_op = v1.train.GradientDescentOptimizer(params.get("lr", learning_rate)).minimize(
            loss, global_step=v1.train.get_global_step())
        return lib.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions)
    return model_fn


def make_estimator(lib, model_dir, **config):
    config.setdefault("log_step_count_steps", None)
    return lib.Estimator(model_fn_for(lib), config=lib.RunConfig(model_dir=str(model_dir), **config))


def test_train_evaluate_predict(estimator_lib, tmp_path):
    estimator = make_estimator(estimator_lib, tmp_path)
    assert estimator.train(dataset_input_fn(), steps=30) is estimator
    assert estimator.get_variable_value("global_step") == 30
    metrics = estimator.evaluate(dataset_input_fn(repeat=False))
    assert sorted(metrics) == ["global_step", "loss", "mae"]
    assert metrics["global_step"] == 30 and metrics["loss"] < 0.05
    assert isinstance(metrics["loss"], np.float32) and isinstance(metrics["global_step"], np.int64)
    rows = list(estimator.predict(dataset_input_fn(batch=10, repeat=False)))
    assert len(rows) == 64 and sorted(rows[0]) == ["double", "y"] and rows[0]["y"].shape == (1,)
    np.testing.assert_allclose(rows[5]["y"], X[5] @ estimator.get_variable_value("kernel"), rtol=1e-5)
    batches = list(estimator.predict(dataset_input_fn(batch=10, repeat=False), predict_keys=["y"],
                                     yield_single_examples=False))
    assert [sorted(b) for b in batches[:1]] == [["y"]] and [len(b["y"]) for b in batches] == [10] * 6 + [4]


def test_both_estimators_compute_the_same_numbers(tmp_path):
    """On TensorFlow 2.15: TensorFlow's Estimator and ours, trained alike, end with the same weights and metrics."""
    if not tensorflow_has_estimator():
        pytest.skip("TensorFlow's own tf.estimator exists up to TensorFlow 2.15")
    ours = importlib.import_module("npu_bridge.tf1compat.estimator")
    outcomes = []
    for name, lib in (("ours", ours), ("tensorflow", v1.estimator)):
        estimator = make_estimator(lib, tmp_path / name, save_checkpoints_steps=4)
        estimator.train(dataset_input_fn(), max_steps=10)
        outcomes.append((estimator.get_variable_value("kernel"), estimator.evaluate(dataset_input_fn(), steps=3),
                         [os.path.basename(p) for p in v1.train.get_checkpoint_state(
                             str(tmp_path / name)).all_model_checkpoint_paths]))
    (our_kernel, our_metrics, our_checkpoints), (kernel, metrics, checkpoints) = outcomes
    np.testing.assert_array_equal(our_kernel, kernel)
    assert our_metrics == metrics
    assert our_checkpoints == checkpoints == ["model.ckpt-0", "model.ckpt-4", "model.ckpt-8", "model.ckpt-10"]


def test_the_input_fn_forms(estimator_lib, tmp_path):
    """A tuple of tensors, a Dataset of features only, and input_fns naming mode / params / config."""
    seen = {}

    def tensors_input_fn(params, mode, config):
        seen[mode] = (params["lr"], config.model_dir)
        x, y = v1.data.make_one_shot_iterator(dataset_input_fn()()).get_next()
        return x, y

    estimator = estimator_lib.Estimator(model_fn_for(estimator_lib), model_dir=str(tmp_path), params={"lr": 0.05},
                                        config=estimator_lib.RunConfig(log_step_count_steps=None))
    estimator.train(tensors_input_fn, max_steps=3)
    assert seen == {estimator_lib.ModeKeys.TRAIN: (0.05, str(tmp_path))}

    def features_only(mode):
        assert mode == estimator_lib.ModeKeys.PREDICT
        return tf.data.Dataset.from_tensor_slices({"x": X[:4]}).batch(2)

    assert len(list(estimator.predict(features_only))) == 4


def test_training_continues_from_the_latest_checkpoint(estimator_lib, tmp_path):
    estimator = make_estimator(estimator_lib, tmp_path, save_checkpoints_steps=2, keep_checkpoint_max=2)
    estimator.train(dataset_input_fn(), steps=5)
    kernel = estimator.get_variable_value("kernel")
    again = make_estimator(estimator_lib, tmp_path, save_checkpoints_steps=2, keep_checkpoint_max=2)
    np.testing.assert_array_equal(again.get_variable_value("kernel"), kernel)
    again.train(dataset_input_fn(), steps=3)
    assert again.get_variable_value("global_step") == 8
    again.train(dataset_input_fn(), max_steps=8)        # already there: nothing runs
    assert os.path.basename(again.latest_checkpoint()) == "model.ckpt-8"
    kept = v1.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths
    assert [os.path.basename(p) for p in kept] == ["model.ckpt-7", "model.ckpt-8"]
    first = again.evaluate(dataset_input_fn(), steps=1, checkpoint_path=str(tmp_path / "model.ckpt-7"))
    assert first["global_step"] == 7


def test_hooks_listeners_and_summaries(estimator_lib, tmp_path):
    class CountRuns(v1.train.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1

    class Saves(v1.train.CheckpointSaverListener):
        def __init__(self):
            self.steps = []

        def after_save(self, session, global_step_value):
            self.steps.append(global_step_value)

    counter, logged = CountRuns(), []
    logging_hook = estimator_lib.LoggingTensorHook({"step": "global_step"}, every_n_iter=2,
                                                   formatter=lambda values: logged.append(values["step"]) or "")
    estimator = make_estimator(estimator_lib, tmp_path, save_checkpoints_steps=3, save_summary_steps=2)
    saves = Saves()
    estimator.train(dataset_input_fn(), hooks=[counter, logging_hook, estimator_lib.StopAtStepHook(last_step=4)],
                    steps=50, saving_listeners=[saves])
    # The step a run logs is read after its increment; checkpoints at the start, every 3 steps and at the end.
    assert counter.runs == 4 and logged == [1, 3] and saves.steps == [0, 3, 4]
    eval_counter = CountRuns()
    estimator.evaluate(dataset_input_fn(), steps=2, hooks=[eval_counter], name="val")
    assert eval_counter.runs == 2
    tags = set()
    for event_file in (tmp_path.glob("events.out.tfevents.*")):
        for event in v1.train.summary_iterator(str(event_file)):
            tags.update(value.tag for value in event.summary.value)
    assert "loss" in tags
    assert list((tmp_path / "eval_val").glob("events.out.tfevents.*"))


class _Evaluations(v1.train.SessionRunHook):
    """Records the global step of every evaluation it is a hook of."""

    def __init__(self):
        self.steps = []

    def after_create_session(self, session, coord):
        self.steps.append(session.run(v1.train.get_global_step()))


def test_train_and_evaluate(estimator_lib, tmp_path):
    """Evaluations after each checkpoint but the first (step 0); the last at the final step."""
    estimator = make_estimator(estimator_lib, tmp_path, save_checkpoints_steps=5)
    evaluations = _Evaluations()
    train_spec = estimator_lib.TrainSpec(dataset_input_fn(), max_steps=12)
    receiver_fn = estimator_lib.export.build_raw_serving_input_receiver_fn({"x": tf.constant(X[:1])})
    exporters = [estimator_lib.FinalExporter("final", receiver_fn),
                 estimator_lib.LatestExporter("latest", receiver_fn, exports_to_keep=2)]
    eval_spec = estimator_lib.EvalSpec(dataset_input_fn(), steps=2, throttle_secs=0, start_delay_secs=0,
                                       hooks=[evaluations], exporters=exporters)
    metrics, export_results = estimator_lib.train_and_evaluate(estimator, train_spec, eval_spec)
    assert metrics["global_step"] == 12 and metrics["loss"] < 1.0
    assert evaluations.steps == [5, 10, 12]
    assert len(list((tmp_path / "export" / "final").iterdir())) == 1
    assert len(list((tmp_path / "export" / "latest").iterdir())) == 2
    assert len(export_results) == 2 and all(export_results)      # the last evaluation's: final's and latest's
    assert list((tmp_path / "eval").glob("events.out.tfevents.*"))


def test_numpy_input_fn(estimator_lib, tmp_path):
    estimator = make_estimator(estimator_lib, tmp_path)
    train = estimator_lib.inputs.numpy_input_fn({"x": X}, Y, batch_size=16, num_epochs=2, shuffle=True)
    estimator.train(train)
    assert estimator.get_variable_value("global_step") == 8       # 2 epochs of 4 batches
    predict = estimator_lib.inputs.numpy_input_fn({"x": X[:5]}, batch_size=2, shuffle=False)
    assert len(list(estimator.predict(predict))) == 5
    with pytest.raises(ValueError, match="shuffle"):
        estimator_lib.inputs.numpy_input_fn({"x": X}, Y)


def test_export_saved_model_serves_the_predictions(estimator_lib, tmp_path):
    estimator = make_estimator(estimator_lib, tmp_path / "model")
    estimator.train(dataset_input_fn(), steps=5)
    receiver_fn = estimator_lib.export.build_raw_serving_input_receiver_fn(
        {"x": tf.constant(X[:1])}, default_batch_size=None)
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver_fn)
    expected = X[:3] @ estimator.get_variable_value("kernel")
    with tf.Graph().as_default(), v1.Session() as session:
        meta = v1.saved_model.loader.load(session, ["serve"], export_dir)
        signature = meta.signature_def["serving_default"]
        served = session.run(signature.outputs["y"].name, {signature.inputs["x"].name: X[:3]})
    np.testing.assert_allclose(served, expected, rtol=1e-6)


def test_warm_start_from_another_model(estimator_lib, tmp_path):
    source = make_estimator(estimator_lib, tmp_path / "source")
    source.train(dataset_input_fn(), steps=10)
    settings = estimator_lib.WarmStartSettings(str(tmp_path / "source"), vars_to_warm_start="kernel")
    warm = estimator_lib.Estimator(model_fn_for(estimator_lib, learning_rate=0.0), warm_start_from=settings,
                                   config=estimator_lib.RunConfig(model_dir=str(tmp_path / "warm"),
                                                                  log_step_count_steps=None))
    warm.train(dataset_input_fn(), steps=1)
    np.testing.assert_array_equal(warm.get_variable_value("kernel"), source.get_variable_value("kernel"))
    assert warm.get_variable_value("global_step") == 1


def test_mistakes_are_named(estimator_lib, tmp_path):
    estimator = make_estimator(estimator_lib, tmp_path)
    with pytest.raises(ValueError, match="steps"):
        estimator.train(dataset_input_fn(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="save_checkpoints"):
        estimator_lib.RunConfig(save_checkpoints_steps=10, save_checkpoints_secs=10)
    with pytest.raises(ValueError, match="features"):
        estimator_lib.Estimator(lambda inputs, labels, mode: None)
    with pytest.raises(ValueError, match="loss"), tf.Graph().as_default():
        estimator_lib.EstimatorSpec(estimator_lib.ModeKeys.EVAL, predictions={"y": tf.constant(1.0)})


def test_install_provides_the_module_paths_ports_import():
    """On TensorFlow >= 2.16 every spelling reaches npu_bridge's Estimator; on 2.15 TensorFlow's own stays."""
    tf1compat.install()
    import tensorflow_estimator
    from tensorflow.python.estimator import estimator as estimator_module
    from tensorflow.python.estimator.run_config import RunConfig
    from tensorflow_estimator.python.estimator.mode_keys import ModeKeys

    if tensorflow_has_estimator():
        assert estimator_module.Estimator is v1.estimator.Estimator
        assert "tensorflow_estimator" in RunConfig.__module__
    else:
        ours = importlib.import_module("npu_bridge.tf1compat.estimator")
        assert v1.estimator is tf.estimator is ours
        assert v1.compat.v1.estimator is ours        # DIN's tf.compat.v1.compat.v1.estimator, with tf already v1
        assert estimator_module.Estimator is ours.Estimator and RunConfig is ours.RunConfig
        assert estimator_module._load_global_step_from_checkpoint_dir("/nonexistent") == 0
        assert tensorflow_estimator.estimator is ours
    assert ModeKeys.PREDICT == "infer"
