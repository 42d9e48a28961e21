"""tensorflow.contrib.quantize.python.graph_matcher: TF 1.15's tree patterns over op types, matched against ops.

A pattern matches an op and, recursively, the ops producing its inputs:
- OpTypePattern(op_type, name=None, inputs=None, ordered_inputs=True): op_type is one type, '*' for any, or
  types separated by '|'; inputs (patterns, or strings standing for OpTypePattern(string)) must then match the
  op's inputs one for one (same count; with ordered_inputs=False, in any order); no inputs accepts any inputs.
  At most 8 inputs (the permutations grow fast).
- OneofPattern(sub_patterns): the first sub-pattern that matches.
GraphMatcher(pattern).match_op / match_ops / match_graph give a MatchResult per match, from which get_op /
get_tensor read the op each pattern (or pattern name) matched and the tensor of it the parent consumed (None for
the root). The object-detection exporter of the ported detection models uses this to find the TPU-friendly
nearest-neighbour resize and replace it with ResizeNearestNeighbor.
"""
import itertools

import tensorflow as tf

from npu_bridge.tf1compat.contrib import removed


class Pattern:
    """A pattern: match(op, tensor) returns a MatchResult, or None when the op does not match; `name` (None unless
    given) is how a MatchResult can be asked for what it matched."""

    name = None

    def match(self, op, tensor):
        raise NotImplementedError(f"{type(self).__name__}.match")


class MatchResult:
    """The op (and the tensor of it its parent consumed) each pattern of a match matched; also by pattern name."""

    def __init__(self):
        self._matched = {}
        self._by_name = {}

    def add(self, pattern, op, tensor):
        if pattern.name is not None and self._by_name.get(pattern.name, pattern) is not pattern:
            raise ValueError(f"graph_matcher: the name {pattern.name!r} is already bound to another pattern")
        self._matched[pattern] = (op, tensor)
        if pattern.name is not None:
            self._by_name[pattern.name] = pattern

    def matches(self):
        """{pattern: (op, tensor)} of this match."""
        return dict(self._matched)

    def names(self):
        """{name: pattern} of this match's named patterns."""
        return dict(self._by_name)

    def merge_from(self, other):
        """Take in another match's entries (a name bound in both ends up bound as in `other`, as in TF 1.15)."""
        self._matched.update(other.matches())
        self._by_name.update(other.names())

    def _op_and_tensor(self, pattern_or_name):
        if isinstance(pattern_or_name, str):
            pattern = self._by_name.get(pattern_or_name)
        elif isinstance(pattern_or_name, Pattern):
            pattern = pattern_or_name
        else:
            raise ValueError(f"graph_matcher: expected a Pattern or a pattern name, got "
                             f"{type(pattern_or_name).__name__}")
        return self._matched.get(pattern, (None, None))

    def get_op(self, pattern_or_name):
        """The op the pattern (or the pattern of that name) matched, or None."""
        return self._op_and_tensor(pattern_or_name)[0]

    def get_tensor(self, pattern_or_name):
        """The tensor of the matched op its parent consumed (None for the root), or None."""
        return self._op_and_tensor(pattern_or_name)[1]


class OpTypePattern(Pattern):
    """Matches an op of the given type(s) whose inputs match `inputs` (see the module)."""

    def __init__(self, op_type, name=None, inputs=None, ordered_inputs=True):
        inputs = [] if inputs is None else list(inputs)
        if len(inputs) > 8:
            raise ValueError(f"OpTypePattern({op_type!r}): at most 8 inputs are allowed, got {len(inputs)}")
        self._op_type = op_type
        self._types = None if op_type == "*" else set(op_type.split("|"))
        self._name = name
        self._inputs = [item if isinstance(item, Pattern) else OpTypePattern(item) for item in inputs]
        self._ordered_inputs = ordered_inputs

    @property
    def name(self):
        return self._name

    def _match_inputs(self, op, patterns):
        result = MatchResult()
        for tensor, pattern in zip(op.inputs, patterns):
            found = pattern.match(tensor.op, tensor)
            if found is None:
                return None
            result.merge_from(found)
        return result

    def match(self, op, tensor):
        if self._types is not None and op.type not in self._types:
            return None
        result = MatchResult()
        result.add(self, op, tensor)
        if not self._inputs:
            return result
        if len(op.inputs) != len(self._inputs):
            return None
        orders = [self._inputs] if self._ordered_inputs else itertools.permutations(self._inputs)
        for patterns in orders:
            inputs = self._match_inputs(op, patterns)
            if inputs is not None:
                result.merge_from(inputs)
                return result
        return None


class OneofPattern(Pattern):
    """Matches what the first matching sub-pattern matches."""

    def __init__(self, sub_patterns):
        self._sub_patterns = list(sub_patterns)

    def match(self, op, tensor):
        for pattern in self._sub_patterns:
            result = pattern.match(op, tensor)
            if result is not None:
                return result
        return None


class GraphMatcher:
    """Matches ops against one pattern."""

    def __init__(self, pattern):
        self._pattern = pattern

    def match_op(self, op):
        """The MatchResult of `op` against the pattern, or None."""
        return self._pattern.match(op, None)

    def match_ops(self, ops):
        """A MatchResult for each op of `ops` that matches, in order."""
        for op in ops:
            result = self.match_op(op)
            if result is not None:
                yield result

    def match_graph(self, graph):
        """A MatchResult for each op of `graph` that matches, in creation order."""
        if not isinstance(graph, tf.Graph):
            raise TypeError(f"GraphMatcher.match_graph: expected a tf.Graph, got {type(graph).__name__}")
        yield from self.match_ops(graph.get_operations())


__getattr__ = removed.module_getattr(__name__)
