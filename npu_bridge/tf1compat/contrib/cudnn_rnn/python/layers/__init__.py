"""tensorflow.contrib.cudnn_rnn.python.layers: TF 1.15's package, which re-exported its cudnn_rnn module's names."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.cudnn_rnn.python.layers.cudnn_rnn import (  # noqa: F401
    CUDNN_INPUT_AUTO_MODE,
    CUDNN_INPUT_LINEAR_MODE,
    CUDNN_INPUT_SKIP_MODE,
    CUDNN_RNN_BIDIRECTION,
    CUDNN_RNN_UNIDIRECTION,
    CudnnGRU,
    CudnnLSTM,
)

__getattr__ = removed.module_getattr(__name__)
