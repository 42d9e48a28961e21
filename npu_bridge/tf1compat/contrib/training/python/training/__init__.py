"""tensorflow.contrib.training.python.training: TF 1.15's package; evaluation and training are tf-slim's (TF 1.15's
files, extracted), hparam is ours."""
from tf_slim.training import evaluation, training  # noqa: F401

from npu_bridge.tf1compat.contrib.training import hparam  # noqa: F401

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
