"""Configuration warnings point at the user's line, whichever entry point led to them."""
import warnings

import tensorflow as tf

from npu_bridge.core.errors import NpuConfigWarning
from npu_bridge.core.options import options_from_config
from npu_test_support import npu_config


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, NpuConfigWarning)]


def test_unknown_key_warning_names_this_file_when_parsed_directly():
    caught = _warnings_of(lambda: options_from_config(npu_config(sump_mode="all")))
    assert caught and all(w.filename == __file__ for w in caught)


def test_unknown_key_warning_names_this_file_when_a_session_is_created():
    import npu_bridge

    npu_bridge.activate()

    def create():
        with tf.Graph().as_default():
            tf.compat.v1.Session(config=npu_config(sump_mode="all")).close()

    caught = _warnings_of(create)
    assert caught and all(w.filename == __file__ for w in caught)
