"""WarmStartSettings: which variables an Estimator initializes from another model's checkpoint before training."""
import collections

import tensorflow.compat.v1 as tf

VocabInfo = tf.train.VocabInfo


class WarmStartSettings(collections.namedtuple("WarmStartSettings", (
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"))):
    """A checkpoint (or a folder holding checkpoints) and the variables to take from it: a regex or a list
    (default: every trainable variable), with optional vocabularies and renamings."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
                var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise ValueError("WarmStartSettings: ckpt_to_initialize_from must name a checkpoint or a folder")
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


def warm_start(settings):
    """Set the initializers of the current graph's variables that `settings` names to the checkpoint's values
    (a checkpoint in model_dir, restored afterwards, still takes precedence)."""
    tf.logging.info("Warm-starting with WarmStartSettings: %s", settings)
    tf.train.warm_start(ckpt_to_initialize_from=settings.ckpt_to_initialize_from,
                        vars_to_warm_start=settings.vars_to_warm_start,
                        var_name_to_vocab_info=settings.var_name_to_vocab_info,
                        var_name_to_prev_var_name=settings.var_name_to_prev_var_name)
