"""tensorflow.contrib.quantize.python: TF 1.15's package path; graph_matcher is provided, the rewrites (see
tf.contrib.quantize) raise."""
