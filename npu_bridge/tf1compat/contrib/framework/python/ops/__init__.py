"""tensorflow.contrib.framework.python.ops as TF 1.15 had it: arg_scope / add_arg_scope are the functions (TF
1.15's package star-imported them over the submodule names), `variables` is the module, audio_ops TF's audio ops."""
from tensorflow.python.ops import gen_audio_ops as audio_ops  # noqa: F401
from tf_slim.ops import variables  # noqa: F401
from tf_slim.ops.arg_scope import *
from tf_slim.ops.variables import *

from npu_bridge.tf1compat.contrib import removed

__getattr__ = removed.module_getattr(__name__)
