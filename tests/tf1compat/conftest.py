"""Fixtures of the TF 1.15 compatibility tests: TF 1.15's module names importable, and a fresh graph per test."""
import pytest
import tensorflow as tf

from npu_bridge import tf1compat


@pytest.fixture
def installed():
    """tf1compat.install(), as npu-run calls it (idempotent: the finders stay for the rest of the process)."""
    tf1compat.install()


@pytest.fixture
def tf1_graph(installed):
    """A fresh default graph with TF 1.15's names installed: contrib builders add variables and collections to it."""
    with tf.Graph().as_default() as graph:
        yield graph
