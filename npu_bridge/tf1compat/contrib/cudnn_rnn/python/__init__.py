"""tensorflow.contrib.cudnn_rnn.python: TF 1.15's package path."""
