"""A small graph model over a GraphDef, built for one pass over large training graphs.

The precision pass needs three things from a graph: the producer of every data input, the consumers of every
output, and a way to add nodes and rewire inputs. Protobuf attribute access is the slow part in Python, so the
model reads each node's name, op and data inputs exactly once (control inputs only on demand) and keeps plain
Python values next to a reference to the NodeDef it came from. Edits go straight into that NodeDef, and new nodes
are appended in bulk from protobuf wire format: build the Graph over a copy of the caller's GraphDef when the
caller's message must stay untouched.
"""
from typing import NamedTuple

from tensorflow.core.framework import node_def_pb2


class Tensor(NamedTuple):
    """One output of one node: ("MatMul", 0) is the tensor TensorFlow names "MatMul:0"."""

    node: str
    port: int

    @property
    def name(self):
        return f"{self.node}:{self.port}"

    def as_input(self):
        """The spelling a NodeDef input uses: "x" for port 0, "x:1" otherwise."""
        return self.node if self.port == 0 else f"{self.node}:{self.port}"


# Tensor(node, port) through tuple.__new__: a NamedTuple's own constructor is a Python function, and the
# graph model builds one per edge of graphs with tens of thousands of edges (2.5x faster measured).
_tensor = tuple.__new__


def _first_control(specs):
    """Index of the first control input ("^name") in a NodeDef's inputs, or len(specs).

    TensorFlow requires control inputs after every data input, so the boundary can be found by bisection: a
    NoOp grouping a training step may carry thousands of control inputs, and converting each protobuf string to
    Python costs more than the whole decision for the node (measured: 320k of the 333k inputs of a 10k-node
    conv+BN training graph are control inputs).
    """
    low, high = 0, len(specs)
    if high == 0 or specs[high - 1][:1] != "^":
        return high
    while low < high:
        middle = (low + high) // 2
        if specs[middle][:1] == "^":
            high = middle
        else:
            low = middle + 1
    return low


class Node:
    """A node of the graph: its NodeDef plus the fields the pass reads over and over."""

    __slots__ = ("name", "op", "node_def", "inputs", "_n_data")

    def __init__(self, node_def):
        self.node_def = node_def
        self.name = node_def.name
        self.op = node_def.op
        specs = node_def.input
        self._n_data = count = _first_control(specs)
        self.inputs = inputs = []
        for spec in specs[:count] if count != len(specs) else specs:    # "name" or "name:port"
            name, sep, port = spec.rpartition(":")
            inputs.append(_tensor(Tensor, (name, int(port)) if sep and port.isdigit() else (spec, 0)))

    @classmethod
    def known(cls, node_def, name, op, inputs):
        """The Node of a NodeDef just written from these values (nothing to read back)."""
        node = cls.__new__(cls)
        node.node_def, node.name, node.op, node.inputs, node._n_data = node_def, name, op, list(inputs), len(inputs)
        return node

    @property
    def control_inputs(self):
        """Names of the nodes this one has control dependencies on (read from the NodeDef on demand)."""
        return [spec[1:] for spec in self.node_def.input[self._n_data:]]

    @property
    def has_control_inputs(self):
        return self._n_data != len(self.node_def.input)

    @property
    def device(self):
        return self.node_def.device

    def __repr__(self):
        return f"Node({self.name!r}, {self.op!r})"


def encode_attrs(attrs):
    """{name: AttrValue} in NodeDef wire format, for `Graph.add_nodes` (encode once, reuse for many nodes)."""
    holder = node_def_pb2.NodeDef()
    for key, value in attrs.items():
        holder.attr[key].CopyFrom(value)
    return holder.SerializeToString()


def _varint(value):
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(field, data):
    """One length-delimited protobuf field (field numbers below 16 fit the one-byte tag)."""
    size = len(data)
    if size < 0x80:             # names and inputs: the length fits one byte
        return bytes(((field << 3) | 2, size)) + data
    return bytes(((field << 3) | 2,)) + _varint(size) + data


class Graph:
    """Nodes by name in GraphDef order, with consumer lists per output tensor."""

    def __init__(self, graph_def):
        self.graph_def = graph_def
        self.nodes = {}
        self.order = []
        for node_def in graph_def.node:
            node = Node(node_def)
            self.nodes[node.name] = node
            self.order.append(node)
        self._consumers = None
        self._reserved = set()

    def __contains__(self, name):
        return name in self.nodes

    def __getitem__(self, name):
        return self.nodes[name]

    def __len__(self):
        return len(self.order)

    def consumers(self, tensor):
        """[(consumer Node, input index)] reading `tensor` through a data edge."""
        if self._consumers is None:
            self._consumers = {}
            for node in self.order:
                for index, source in enumerate(node.inputs):
                    self._consumers.setdefault(source, []).append((node, index))
        return self._consumers.get(tensor, ())

    def unique_name(self, base):
        """`base` if no node has it and it is not reserved, else `base_1`, `base_2`, ... (first free)."""
        taken, reserved = self.nodes, self._reserved
        name, index = base, 0
        while name in taken or name in reserved:
            index += 1
            name = f"{base}_{index}"
        return name

    def reserve_name(self, base):
        """A unique name kept for a node that `add_nodes` will append later (so inputs can name it now)."""
        name = self.unique_name(base)
        self._reserved.add(name)
        return name

    def add_node(self, name, op, inputs, attrs, device=""):
        """Append a node. `inputs` are Tensors; `attrs` maps names to AttrValue messages."""
        return self.add_nodes([(name, op, inputs, device, encode_attrs(attrs))])[0]

    def add_nodes(self, new_nodes):
        """Append nodes given as (name, op, input Tensors, device, attributes from `encode_attrs`).

        The NodeDefs are written in protobuf wire format and parsed in one call instead of being filled in
        field by field from Python, which costs several times more per node when a pass adds thousands.
        """
        new_nodes = list(new_nodes)
        start = len(self.graph_def.node)
        wire, fixed = [], {}        # fixed: (op, device, attributes) -> their encoded fields, shared by many nodes
        for name, op, inputs, device, attrs_wire in new_nodes:
            tail = fixed.get((op, device, attrs_wire))
            if tail is None:
                tail = fixed[(op, device, attrs_wire)] = b"".join((
                    _length_delimited(2, op.encode()), _length_delimited(4, device.encode()) if device else b"",
                    attrs_wire))
            fields = [_length_delimited(1, name.encode())]
            fields.extend(_length_delimited(3, t.as_input().encode()) for t in inputs)
            fields.append(tail)
            wire.append(_length_delimited(1, b"".join(fields)))      # one GraphDef.node entry
        self.graph_def.MergeFromString(b"".join(wire))
        added = [Node.known(node_def, name, op, inputs)
                 for node_def, (name, op, inputs, _, _) in zip(self.graph_def.node[start:], new_nodes)]
        for node in added:
            self._reserved.discard(node.name)
            self.nodes[node.name] = node
            self.order.append(node)
            if self._consumers is not None:
                for index, source in enumerate(node.inputs):
                    self._consumers.setdefault(source, []).append((node, index))
        return added

    def set_input(self, node, index, tensor):
        """Make data input `index` of `node` read `tensor` (control inputs stay where they are)."""
        old = node.inputs[index]
        node.inputs[index] = tensor
        node.node_def.input[index] = tensor.as_input()
        if self._consumers is not None:
            self._consumers[old].remove((node, index))
            self._consumers.setdefault(tensor, []).append((node, index))
