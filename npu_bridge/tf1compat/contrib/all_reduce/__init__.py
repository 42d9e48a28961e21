"""tf.contrib.all_reduce: TF 1.15's graph-built all-reduce algorithms (python.all_reduce)."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.all_reduce import python  # noqa: F401
from npu_bridge.tf1compat.contrib.all_reduce.python.all_reduce import *  # noqa: F403

__getattr__ = removed.module_getattr(__name__)
