"""tensorflow.contrib.cudnn_rnn.python.ops.cudnn_rnn_ops: TF 1.15's module path for its constants and the
compatible cells."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.cudnn_rnn.cudnn_rnn_ops import (  # noqa: F401
    CUDNN_GRU,
    CUDNN_GRU_PARAMS_PER_LAYER,
    CUDNN_INPUT_AUTO_MODE,
    CUDNN_INPUT_LINEAR_MODE,
    CUDNN_INPUT_SKIP_MODE,
    CUDNN_LSTM,
    CUDNN_LSTM_PARAMS_PER_LAYER,
    CUDNN_RNN_BIDIRECTION,
    CUDNN_RNN_RELU,
    CUDNN_RNN_RELU_PARAMS_PER_LAYER,
    CUDNN_RNN_TANH,
    CUDNN_RNN_TANH_PARAMS_PER_LAYER,
    CUDNN_RNN_UNIDIRECTION,
    CudnnCompatibleGRUCell,
    CudnnCompatibleLSTMCell,
)

__getattr__ = removed.module_getattr(__name__)
