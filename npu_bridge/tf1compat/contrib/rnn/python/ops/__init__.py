"""`tensorflow.contrib.rnn.python.ops`: core_rnn_cell and rnn_cell, as TF 1.15 laid them out."""
