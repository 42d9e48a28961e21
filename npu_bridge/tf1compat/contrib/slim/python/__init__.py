"""tensorflow.contrib.slim.python: TF 1.15's package path; its `slim` package is tf-slim itself."""
import tf_slim as slim  # noqa: F401
