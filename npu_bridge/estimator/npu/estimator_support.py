"""Where tf.estimator lives, if anywhere: TensorFlow 2.15 is the last release that ships it."""
import tensorflow.compat.v1 as tf

ESTIMATOR = getattr(tf, "estimator", None)


class EstimatorUnavailableError(ImportError):
    """Raised by the Estimator-only API on a TensorFlow without tf.estimator."""


def require_estimator(what):
    """tf.compat.v1.estimator, or a clear error naming TF 2.15 as the last release that has it."""
    if ESTIMATOR is None:
        raise EstimatorUnavailableError(
            f"{what} needs tf.estimator, which TensorFlow removed in 2.16 (this is TensorFlow {tf.__version__}). "
            "TensorFlow 2.15 is the last version with tf.estimator: run Estimator scripts in an environment with "
            "tensorflow==2.15.*, or port them to sess.run training with npu_config_proto().")
    return ESTIMATOR
