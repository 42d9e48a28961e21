"""TF 1.15's `tensorflow.examples.tutorials`."""
