"""tensorflow.contrib.training.python: TF 1.15's package path; its `training` package is tf-slim's (evaluation,
training), with our hparam module beside them."""
from npu_bridge.tf1compat.contrib.training import hparam  # noqa: F401
