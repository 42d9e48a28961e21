"""tf.contrib.saved_model: the SavedModel helpers ported prediction and serving code still imports.

`reader` (read_saved_model, get_saved_model_tag_sets) and get_signature_def_by_key, which TensorFlow 2 keeps only in
its internal tools or dropped, are written here with TF 1.15's behaviour. TF 1.15's deep paths `...saved_model.python` and `...python.saved_model` are this
package too (tf1compat.ALIASES), so `from tensorflow.contrib.saved_model.python.saved_model import reader` works.
"""
from npu_bridge.tf1compat.contrib import removed


def get_signature_def_by_key(meta_graph_def, signature_def_key):
    """The SignatureDef stored under `signature_def_key` in `meta_graph_def`; ValueError naming the key if absent."""
    if signature_def_key not in meta_graph_def.signature_def:
        raise ValueError(f"No SignatureDef with key '{signature_def_key}' found in MetaGraphDef.")
    return meta_graph_def.signature_def[signature_def_key]


__getattr__ = removed.module_getattr(__name__)
