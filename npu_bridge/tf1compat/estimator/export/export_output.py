"""`tensorflow.python.estimator.export.export_output`: TensorFlow core's export output classes."""
from tensorflow.python.saved_model.model_utils.export_output import (  # noqa: F401  (re-exported)
    ClassificationOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
)
