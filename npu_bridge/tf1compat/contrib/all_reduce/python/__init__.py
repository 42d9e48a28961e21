"""tensorflow.contrib.all_reduce.python: TF 1.15's package path of the all_reduce module."""
