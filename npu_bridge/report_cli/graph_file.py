"""Read the GRAPH argument: a GraphDef (.pb binary, .pbtxt text) or a MetaGraphDef (.meta, from tf.train.Saver).

Files in the wild do not always carry the suffix their content suggests (write_graph(as_text=True) to "x.pb",
export_meta_graph(as_text=True) to "x.meta"), so every form is tried, the one the suffix names first.
"""
from pathlib import Path

from google.protobuf import message, text_format
from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import meta_graph_pb2


class GraphFileError(ValueError):
    """GRAPH cannot be read as a GraphDef or MetaGraphDef; the message names the file."""


_BINARY_GRAPH = (graph_pb2.GraphDef, False)
_TEXT_GRAPH = (graph_pb2.GraphDef, True)
_BINARY_META = (meta_graph_pb2.MetaGraphDef, False)
_TEXT_META = (meta_graph_pb2.MetaGraphDef, True)
_ORDER_BY_SUFFIX = {
    ".meta": (_BINARY_META, _TEXT_META, _BINARY_GRAPH, _TEXT_GRAPH),
    ".pbtxt": (_TEXT_GRAPH, _TEXT_META, _BINARY_GRAPH, _BINARY_META),
    ".txt": (_TEXT_GRAPH, _TEXT_META, _BINARY_GRAPH, _BINARY_META),
}
_DEFAULT_ORDER = (_BINARY_GRAPH, _TEXT_GRAPH, _BINARY_META, _TEXT_META)


def _parse_as(proto_class, text, data):
    """The GraphDef inside `data` read as proto_class, or None when it does not parse into a plausible graph.

    Binary protobuf parsing is lenient (a MetaGraphDef may parse as a GraphDef with nameless nodes), so a result
    only counts when it has nodes and every node has a name and an op.
    """
    proto = proto_class()
    try:
        if text:
            text_format.Parse(data.decode("utf-8"), proto)
        else:
            proto.ParseFromString(data)
    except (message.DecodeError, text_format.ParseError, UnicodeDecodeError):
        return None
    graph_def = proto.graph_def if proto_class is meta_graph_pb2.MetaGraphDef else proto
    if graph_def.node and all(node.name and node.op for node in graph_def.node):
        return graph_def
    return None


def load_graph_def(path):
    """The GraphDef stored in `path`; GraphFileError naming the file when it is missing or holds no graph."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise GraphFileError(f"cannot read graph file '{path}': {err.strerror or err}") from None
    for proto_class, text in _ORDER_BY_SUFFIX.get(Path(path).suffix.lower(), _DEFAULT_ORDER):
        graph_def = _parse_as(proto_class, text, data)
        if graph_def is not None:
            return graph_def
    raise GraphFileError(f"graph file '{path}' is neither a GraphDef (.pb binary, .pbtxt text) nor a MetaGraphDef "
                         "(.meta) with at least one node")
