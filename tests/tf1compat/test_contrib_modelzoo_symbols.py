"""Every tf.contrib symbol that two or more ModelZoo training folders use resolves, both as an attribute chain
(`tf.compat.v1.contrib.layers.xavier_initializer`) and as the import a script writes (`from tensorflow.contrib.layers
import xavier_initializer`); the two the layer does not provide raise the contrib error naming them. A symbol only
one folder uses resolves or raises that error naming it and its own TF 2 replacement (not the generic text). Deep
module paths work as attributes too, as they did in TF 1.15, whose packages had imported their submodules: an
attribute chain never ends in a bare AttributeError on one of our modules or on the module an alias names.

data/modelzoo_contrib_symbols.tsv is the census's list of the contrib symbols the ports use (symbol, number of
training folders using it)."""
import importlib
import pathlib
import types

import pytest
import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed
from npu_bridge.tf1compat.contrib.removed import ContribRemovedError

pytestmark = pytest.mark.usefixtures("installed")

_ROWS = [line.split("\t") for line in
         (pathlib.Path(__file__).parent / "data" / "modelzoo_contrib_symbols.tsv").read_text().splitlines()[1:]]
SYMBOLS = [symbol for symbol, folders in _ROWS if int(folders) >= 2]
ONE_FOLDER_SYMBOLS = [symbol for symbol, folders in _ROWS if int(folders) == 1]
GENERIC_REPLACEMENT = removed.replacement("contrib.no_such_module")
# In the list, but TF 1.15 had neither: the census found them only in docstrings and comments.
NOT_PROVIDED = {
    "contrib.filter_variables": r"tf\.contrib\.framework\.filter_variables",
    "contrib.slim.nets.cyclegan": r"research/slim/nets",
}


def _by_attributes(symbol):
    found = tf.compat.v1
    for part in symbol.split("."):
        found = getattr(found, part)
    return found


def _modules(parts):
    """How many leading parts of a symbol are modules (as attributes)."""
    found = tf.compat.v1
    for count, part in enumerate(parts):
        found = getattr(found, part)
        if not isinstance(found, types.ModuleType):
            return count
    return len(parts)


def _by_import(symbol):
    """The deepest module imported from its package, as scripts write it (`from tensorflow.contrib import slim`,
    `from tensorflow.contrib.seq2seq.python.ops import decoder`), then the rest read as attributes
    (`slim.model_analyzer.analyze_vars`: TF 1.15 had no module file of that path either)."""
    parts = symbol.split(".")
    count = _modules(parts)
    namespace = {}
    exec(f"from tensorflow.{'.'.join(parts[:count - 1])} import {parts[count - 1]} as found", namespace)
    found = namespace["found"]
    for part in parts[count:]:
        found = getattr(found, part)
    return found


def test_the_list_is_the_census_one():
    assert len(ONE_FOLDER_SYMBOLS) == 166 and len(SYMBOLS) == 201 and {"contrib.slim", "contrib.layers.xavier_initializer",
                                    "contrib.tpu.TPUEstimatorSpec"} <= set(SYMBOLS)


@pytest.mark.parametrize("symbol", sorted(set(SYMBOLS) - set(NOT_PROVIDED)))
def test_every_symbol_two_or_more_folders_use_resolves_both_ways(symbol):
    by_attributes = _by_attributes(symbol)
    assert by_attributes is not None
    assert _by_import(symbol) is by_attributes


@pytest.mark.parametrize("symbol, replacement", sorted(NOT_PROVIDED.items()))
def test_the_two_symbols_not_provided_raise_the_contrib_error_both_ways(symbol, replacement):
    for spelling in (lambda: _by_attributes(symbol), lambda: _by_import(symbol)):
        with pytest.raises(ContribRemovedError, match=rf"tf\.{symbol} is not provided.*{replacement}"):
            spelling()


@pytest.mark.parametrize("symbol", ONE_FOLDER_SYMBOLS)
def test_a_symbol_one_folder_uses_resolves_or_names_itself_and_its_own_replacement(symbol):
    parts = symbol.split(".")
    for spelling in (_by_attributes, _by_import):
        try:
            assert spelling(symbol) is not None
        except ContribRemovedError as error:
            message = str(error)
            named = message.split(" ", 1)[0]
            assert named.startswith("tf.contrib.") and symbol.startswith(named[len("tf."):]), message
            assert len(named.split(".")) > 2 or len(parts) == 2, message        # the missing part, not just tf.contrib
            assert GENERIC_REPLACEMENT not in message, message


def test_huaweis_older_paths_resolve_as_attributes_after_the_imports_a_script_made():
    import tensorflow.contrib.hccl  # noqa: F401 (binds the module under the name: the attribute chain must survive)
    import tensorflow.contrib.offline_train  # noqa: F401
    from npu_bridge.estimator import npu_ops
    from npu_bridge.estimator.npu.npu_config import NPURunConfig
    from npu_bridge.hccl import get_rank_size, hccl_ops

    contrib = tf.compat.v1.contrib
    assert contrib.offline_train.python.npu.npu_config.NPURunConfig is NPURunConfig
    assert contrib.offline_train.python.npu_ops is npu_ops
    assert contrib.hccl.python.ops.hccl_ops is hccl_ops
    assert contrib.hccl.get_rank_size is get_rank_size
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.offline_train\.python\.npu\.no_such_module "):
        contrib.offline_train.python.npu.no_such_module


def test_deep_module_paths_of_our_packages_and_of_aliased_ones_resolve_as_attributes():
    contrib = tf.compat.v1.contrib
    from tensorflow.contrib.seq2seq.python.ops import decoder
    from tensorflow.contrib.tpu.proto import compilation_result_pb2

    assert contrib.seq2seq.python.ops.decoder is decoder
    assert contrib.learn.python.learn.datasets.base is importlib.import_module(
        "tensorflow.contrib.learn.python.learn.datasets.base")
    assert contrib.tpu.proto.compilation_result_pb2 is compilation_result_pb2
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.seq2seq\.python\.ops\.no_such_module "):
        contrib.seq2seq.python.ops.no_such_module
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.quantize\.python\.no_such_module "):
        from tensorflow.contrib.quantize.python import no_such_module  # noqa: F401


def test_keras_paths_older_than_tf_1_15_name_tf_compat_v1_keras():
    assert tf.compat.v1.contrib.keras.layers.Dense is tf.compat.v1.keras.layers.Dense
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.keras\.python is not provided.*tf\.compat\.v1\.keras"):
        from tensorflow.contrib.keras.python.keras.layers import Conv3D  # noqa: F401
    with pytest.raises(ContribRemovedError, match=r"tf\.contrib\.keras\.python is not provided"):
        tf.compat.v1.contrib.keras.python
