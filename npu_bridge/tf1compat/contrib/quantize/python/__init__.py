"""tensorflow.contrib.quantize.python: TF 1.15's package path; graph_matcher is provided, the rewrites (see
tf.contrib.quantize) raise."""

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
