"""The TF 1.15 compatibility room's import aliases: `tensorflow.contrib...` names resolve to our modules."""
import importlib
import sys

import pytest

from npu_bridge import tf1compat


pytestmark = pytest.mark.usefixtures("installed")


def test_tensorflow_contrib_imports_as_the_compat_package():
    import tensorflow.contrib as contrib

    assert contrib is importlib.import_module("npu_bridge.tf1compat.contrib")
    assert sys.modules["tensorflow.contrib"] is contrib


def test_install_is_idempotent():
    tf1compat.install()
    assert sum(finder is tf1compat._FINDER for finder in sys.meta_path) == 1


def test_a_name_the_package_lacks_is_a_clear_error():
    import tensorflow.contrib as contrib

    with pytest.raises(ImportError, match=r"tf\.contrib\.no_such_module is not provided"):
        contrib.no_such_module


def test_names_outside_the_aliases_are_left_alone():
    assert tf1compat._FINDER.target("tensorflow.python.framework") is None
    assert tf1compat._FINDER.find_spec("tensorflow_contrib_lookalike") is None
