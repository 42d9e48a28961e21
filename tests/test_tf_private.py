"""Every private TensorFlow API npu_bridge uses still exists in this TensorFlow (one test per API, named after
it: a release that renames or drops one fails exactly that test), and the accessors do what the runtime needs."""
import pytest
import tensorflow as tf

from npu_bridge import tf_private

v1 = tf.compat.v1


@pytest.mark.parametrize("api", sorted(tf_private.ACCESSED))
def test_tensorflow_still_has(api):
    assert tf_private.ACCESSED[api]() is not None


def test_the_accessors_read_what_the_runtime_reads():
    graph = tf.Graph()
    with graph.as_default():
        ref = v1.Variable(1.0, use_resource=False)
        x = v1.placeholder(tf.float32, [], name="x")
        y = tf.identity(x * 2.0, name="y")
        bodies = []
        loop = tf.while_loop(lambda i: i < 3, lambda i: bodies.append(tf.identity(i + 1)) or bodies[-1],
                             [tf.constant(0)])
    body = bodies[0].op
    assert tf_private.is_ref_dtype(ref._variable.dtype) and not tf_private.is_ref_dtype(y.dtype)
    assert tf_private.control_flow_context(body) is not None and tf_private.control_flow_context(y.op) is None
    assert tf_private.op_id(x.op) < tf_private.op_id(y.op)
    with graph.as_default():
        fetched = tf_private.fetch_mapper({"a": y, "b": [y, loop]}).unique_fetches()
    assert [t.name for t in fetched] == ["y:0", loop[0].name]
    for lock in (tf_private.session_run_lock, tf_private.mutation_lock):     # two groups of one lock: never nested
        with lock(graph):
            pass
    assert tf_private.NODEDEF_NAME_RE.search("[[{{node y}}]]").group(3) == "y"


def test_a_graph_def_imports_and_grows_through_the_c_api():
    source = tf.Graph()
    with source.as_default():
        tf.constant(2.0, name="c")
    graph = tf.Graph()
    with graph.as_default():
        imported = tf_private.import_graph_def_unchecked(source.as_graph_def(), {})
    assert [op.name for op in imported] == ["c"]
    assert tf_private.c_api.TF_OperationName(tf_private.c_op(imported[0])) == "c"
