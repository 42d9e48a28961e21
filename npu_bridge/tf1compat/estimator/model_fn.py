"""EstimatorSpec: what a model_fn returns, checked here so a wrong model_fn fails with its field named."""
import collections

import tensorflow.compat.v1 as tf
from tensorflow.python.saved_model.model_utils import export_utils

from npu_bridge.tf1compat.estimator.mode_keys import ModeKeys

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
           "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """The ops and objects a model_fn returns for one mode: TRAIN needs loss and train_op, EVAL needs loss,
    PREDICT needs predictions. A loss of shape [1] is read as the scalar it holds."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"EstimatorSpec: mode must be one of ModeKeys.TRAIN/EVAL/PREDICT, got {mode!r}")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("EstimatorSpec: train_op is required in TRAIN mode (got None)")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError(f"EstimatorSpec: loss is required in {mode.upper()} mode (got None)")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("EstimatorSpec: predictions are required in PREDICT mode (got None)")
        loss = None if loss is None else _scalar_loss(loss)
        if predictions is not None and not isinstance(predictions, (dict, tf.Tensor)):
            predictions = tf.convert_to_tensor(predictions)
        eval_metric_ops = _checked_metrics(eval_metric_ops or {})
        if mode == ModeKeys.PREDICT:
            export_outputs = export_utils.get_export_outputs(export_outputs, predictions)
        hooks = {name: _checked_hooks(name, value) for name, value in (
            ("training_chief_hooks", training_chief_hooks), ("training_hooks", training_hooks),
            ("evaluation_hooks", evaluation_hooks), ("prediction_hooks", prediction_hooks))}
        if scaffold is not None and not isinstance(scaffold, tf.train.Scaffold):
            raise TypeError(f"EstimatorSpec: scaffold must be a tf.train.Scaffold, got {type(scaffold).__name__}")
        return super().__new__(cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
                               eval_metric_ops=eval_metric_ops, export_outputs=export_outputs,
                               scaffold=scaffold or tf.train.Scaffold(), **hooks)


def _scalar_loss(loss):
    loss = tf.convert_to_tensor(loss)
    if loss.shape.rank == 1 and loss.shape[0] == 1:
        return tf.reshape(loss, [])
    if loss.shape.rank not in (0, None):
        raise ValueError(f"EstimatorSpec: loss must be a scalar, got {loss.name} of shape {loss.shape}")
    return loss


def _checked_metrics(metrics):
    if not isinstance(metrics, dict):
        raise TypeError(f"EstimatorSpec: eval_metric_ops must be a dict, got {type(metrics).__name__}")
    for key, metric in metrics.items():
        is_pair = isinstance(metric, tuple) and len(metric) == 2
        if not is_pair and not hasattr(metric, "result"):
            raise TypeError(f"EstimatorSpec: eval_metric_ops[{key!r}] must be a (value_op, update_op) tuple or a "
                            f"Keras Metric, got {metric!r}")
    return dict(metrics)


def _checked_hooks(name, hooks):
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.train.SessionRunHook):
            raise TypeError(f"EstimatorSpec: {name} must hold SessionRunHook instances, got {type(hook).__name__}")
    return hooks
