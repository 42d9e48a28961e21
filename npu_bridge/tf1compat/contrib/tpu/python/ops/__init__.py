"""tensorflow.contrib.tpu.python.ops: TF 1.15's package path; tpu_ops is TensorFlow's own."""
from tensorflow.python.tpu.ops import tpu_ops  # noqa: F401
