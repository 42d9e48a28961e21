"""tf.contrib.framework: arg_scope, the variable helpers, checkpoint reading and nest, as TF 1.15 exported them.

arg_scope and the variable helpers are tf-slim's (TF 1.15's contrib/framework files, extracted); checkpoint
reading, the graph helpers, smart_cond and the deprecation decorators are TF's own under their TF 2 names.
"""
from tensorflow.python.framework.ops import get_name_scope  # noqa: F401
from tensorflow.python.framework.smart_cond import smart_cond  # noqa: F401
from tensorflow.python.framework.tensor_util import is_tf_type as is_tensor  # noqa: F401
from tensorflow.python.ops.sort_ops import argsort, sort  # noqa: F401
from tensorflow.python.util.deprecation import deprecated, deprecated_arg_values, deprecated_args  # noqa: F401
from tensorflow.python.training.checkpoint_utils import (  # noqa: F401
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from tf_slim.ops.arg_scope import *
from tf_slim.ops.variables import *
from tf_slim.ops.variables import filter_variables  # noqa: F401  (outside tf-slim's __all__)

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.framework import nest, python  # noqa: F401

__getattr__ = removed.module_getattr(__name__)
