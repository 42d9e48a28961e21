"""tensorflow.contrib.seq2seq.python: TF 1.15's package path."""
