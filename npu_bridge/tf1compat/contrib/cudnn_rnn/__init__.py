"""tf.contrib.cudnn_rnn on a CPU: the CudnnLSTM / CudnnGRU layers (computed with the cuDNN-compatible cells'
arithmetic, their variables under the canonical names TF 1.15 checkpointed them by) and the compatible cells. The
cuDNN-only RNN tanh / relu layers and the saveables are not provided."""
from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.cudnn_rnn.cudnn_rnn_layers import CudnnGRU, CudnnLSTM  # noqa: F401
from npu_bridge.tf1compat.contrib.cudnn_rnn.cudnn_rnn_ops import (  # noqa: F401
    CudnnCompatibleGRUCell,
    CudnnCompatibleLSTMCell,
)

__getattr__ = removed.module_getattr(__name__)
