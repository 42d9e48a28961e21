"""tensorflow.contrib.cudnn_rnn.python.ops: TF 1.15's package path (cudnn_rnn_ops)."""
