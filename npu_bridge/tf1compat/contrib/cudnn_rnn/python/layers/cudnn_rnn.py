"""tensorflow.contrib.cudnn_rnn.python.layers.cudnn_rnn: TF 1.15's module path for the layers and the direction
and input-mode constants."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.cudnn_rnn.cudnn_rnn_layers import CudnnGRU, CudnnLSTM  # noqa: F401
from npu_bridge.tf1compat.contrib.cudnn_rnn.cudnn_rnn_ops import (  # noqa: F401
    CUDNN_INPUT_AUTO_MODE,
    CUDNN_INPUT_LINEAR_MODE,
    CUDNN_INPUT_SKIP_MODE,
    CUDNN_RNN_BIDIRECTION,
    CUDNN_RNN_UNIDIRECTION,
)

__getattr__ = removed.module_getattr(__name__)
