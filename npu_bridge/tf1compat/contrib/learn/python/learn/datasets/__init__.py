"""`tensorflow.contrib.learn.python.learn.datasets`: base, as TF 1.15 laid it out."""
