"""`keras_to_npu.model_to_npu_estimator`: a compiled Keras model as an NPUEstimator (TensorFlow <= 2.15: later
Keras has no model_to_estimator, so on those versions it stops with an error saying so).

TensorFlow's model_to_estimator builds the model_fn; the NPUEstimator around it takes the NPURunConfig, so its
sessions run on the emulated NPU. Beyond the real helper, which keeps only the model_fn, the estimator starts
from the Keras model's own weights (as model_to_estimator's estimator does), so a pre-trained model is
fine-tuned rather than trained again from fresh initial values.
"""
import tensorflow.compat.v1 as tf

from npu_bridge import tf_private
from npu_bridge.estimator.npu.estimator_support import ESTIMATOR
from npu_bridge.estimator.npu.npu_estimator import NPUEstimator
from npu_bridge.tf1compat.estimator_paths import tensorflow_has_estimator


class EstimatorUnavailableError(ImportError):
    """Raised by model_to_npu_estimator on a TensorFlow whose Keras cannot turn a model into an Estimator."""


def model_to_npu_estimator(keras_model=None, keras_model_path=None, custom_objects=None, model_dir=None,
                           checkpoint_format="saver", config=None, job_start_file=""):
    """An NPUEstimator that trains, evaluates and predicts with `keras_model` (or the model saved at
    `keras_model_path`); `config` is the NPURunConfig."""
    if not tensorflow_has_estimator():
        raise EstimatorUnavailableError(
            f"model_to_npu_estimator needs Keras's model_to_estimator, which TensorFlow removed in 2.16 (this is "
            f"TensorFlow {tf.__version__}): use TensorFlow 2.15, or write a model_fn for NPUEstimator that builds "
            "the Keras model, or train the model with Keras fit")
    model_dir = model_dir or (config.model_dir if config is not None else None)
    keras_estimator = tf.keras.estimator.model_to_estimator(
        keras_model=keras_model, keras_model_path=keras_model_path, custom_objects=custom_objects,
        model_dir=model_dir, config=ESTIMATOR.RunConfig(model_dir=model_dir), checkpoint_format=checkpoint_format)
    return NPUEstimator(model_fn=keras_estimator.model_fn, model_dir=keras_estimator.model_dir, config=config,
                        job_start_file=job_start_file, warm_start_from=tf_private.estimator_warm_start_settings(keras_estimator))
