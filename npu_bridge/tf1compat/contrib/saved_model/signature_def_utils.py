"""tensorflow.contrib.saved_model.python.saved_model.signature_def_utils: TF 1.15's module of get_signature_def_by_key
(the package's function)."""
from npu_bridge.tf1compat.contrib.saved_model import get_signature_def_by_key  # noqa: F401
