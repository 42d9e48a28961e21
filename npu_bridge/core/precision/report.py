"""What the precision pass decided, op by op, in a form a person hunting an accuracy problem can read."""
import difflib
import json
from dataclasses import asdict, dataclass
from typing import Mapping, NamedTuple

from tensorflow.core.framework import graph_pb2


class TensorRef(NamedTuple):
    """Where a user tensor's value lives after the rewrite: internal tensor name ("node:0") and its dtype.

    A NamedTuple, not a dataclass: the pass makes one per rewired output (thousands on large graphs).
    """

    name: str
    dtype: str


@dataclass(frozen=True)
class OpRecord:
    """One node's outcome. `list` is "white"/"black"/"gray", or "-" for ops with no float work or with state.

    decision: the dtype the op computes in ("float16", "bfloat16", "float32") or "unchanged".
    reason: one sentence naming the rule that decided it.
    casts: names of the Casts added because of this op (for its inputs, or to round its outputs).
    emulated: computed in float32 between Casts (no CPU kernel in the reduced dtype, or a cube op).
    origin: why the op type is in its list ("built-in ascend910 precision_reduce=true", "modify_mixlist <path>:
    black-list.to-add"), so the JSON alone says which file to edit; empty for ops with list "-".
    """

    name: str
    tf_type: str
    ir_type: str
    list: str
    decision: str
    reason: str
    casts: tuple = ()
    emulated: bool = False
    origin: str = ""


class Report:
    """The outcome of one rewrite: counts, one OpRecord per op of the input graph, and ways to read them.

    Records are built on first access: the runtime rewrites on every graph change and mostly needs only
    summary(), so a 10k-node graph does not pay for 10k records it may never read.
    `rows` is a function returning (the OpRecords in graph order, {gray op: producer it followed});
    `n_ops` and `n_reduced` are counted by the pass so that summary() never calls it.
    `warnings`: sentences about values the reduced dtype destroys (a constant that rounds to 0 or overflows where
    an op reads it reduced), logged with the summary; the ops involved say it in their reason too.
    `overflow_mode`: "saturation" (a float16 overflow gives +-65504 and raises the overflow status, as on the
    first-generation 910) or "inf_nan" (IEEE inf, 910B and later); `n_clamped`: float16 outputs clamped for it.
    """

    def __init__(self, mode_name, soc, reduced_dtype, rows, n_ops, n_reduced, n_casts, warnings=(),
                 overflow_mode="inf_nan", n_clamped=0):
        self.overflow_mode = overflow_mode
        self.n_clamped = n_clamped
        self.mode_name = mode_name
        self.soc = soc
        self.reduced_dtype = reduced_dtype
        self.n_ops = n_ops
        self.n_reduced = n_reduced
        self.n_casts = n_casts
        self.warnings = warnings
        self._make_rows = rows
        self._records = None
        self._followed = None
        self._by_name = None

    def _build(self):
        self._records, self._followed = self._make_rows()
        self._make_rows = None

    @property
    def followed(self):
        """{gray op name: the producer whose dtype it followed}."""
        if self._records is None:
            self._build()
        return self._followed

    @property
    def records(self):
        if self._records is None:
            self._build()
        return self._records

    def by_name(self, name):
        """The record of op `name`; a KeyError naming the closest op names when the graph has none of that name."""
        if self._by_name is None:
            self._by_name = {r.name: r for r in self.records}
        record = self._by_name.get(name)
        if record is None:
            close = difflib.get_close_matches(str(name), self._by_name, n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise KeyError(f"the report has no op named {name!r}{hint}")
        return record

    def reduced(self):
        """Records of the ops that compute in the reduced dtype: the first place to look for lost accuracy."""
        return [r for r in self.records if r.decision == self.reduced_dtype]

    def explain(self, name):
        """Why `name` computes in its dtype, walking back through the producers gray ops followed.

        The last line is the op that set the dtype for the whole chain (a white or black op, a fallback rule,
        a keep_dtype or customize_dtypes entry): the place to change when a reduced op breaks accuracy.
        """
        lines, seen = [], set()
        while name and name not in seen:
            seen.add(name)
            record = self.by_name(name)
            lines.append(f"{record.name} [{record.tf_type} -> {record.ir_type}, {record.list}]: {record.decision}. "
                         f"{record.reason}")
            name = self.followed.get(name)
        return "\n".join(lines)

    def summary(self):
        overflow = "saturation mode" if self.overflow_mode == "saturation" else "INF/NaN mode"
        return (f"NpuOptimizer {self.mode_name}: {self.n_reduced}/{self.n_ops} ops reduced to "
                f"{self.reduced_dtype}, {self.n_casts} casts, {overflow}")

    def __repr__(self):
        """What `print(last_report(sess))` shows: the summary, the soc, and where to look next."""
        warned = f", {len(self.warnings)} warnings" if self.warnings else ""
        return (f"<Report {self.summary()} on {self.soc}{warned}; .table() lists the ops, .explain(name) walks one "
                f"op's decision back, .to_json() has everything>")

    def table(self, everything=False):
        """One line per op with float work (every op if `everything`): name, types, list, decision, reason."""
        rows = [r for r in self.records if everything or r.decision != "unchanged"]
        lines = [self.summary()]
        for r in rows:
            mark = " (float32 between casts)" if r.emulated else ""
            lines.append(f"{r.name} [{r.tf_type} -> {r.ir_type}, {r.list}]: {r.decision}{mark}. {r.reason}")
        return "\n".join(lines)

    def to_json(self):
        return json.dumps({
            "mode": self.mode_name, "soc": self.soc, "reduced_dtype": self.reduced_dtype,
            "overflow_mode": self.overflow_mode, "n_clamped": self.n_clamped,
            "n_ops": self.n_ops, "n_reduced": self.n_reduced, "n_casts": self.n_casts,
            "warnings": list(self.warnings), "records": [asdict(r) for r in self.records],
        }, indent=1)


@dataclass(frozen=True)
class RewriteResult:
    graph_def: graph_pb2.GraphDef
    report: Report
    tensor_map: Mapping[str, TensorRef]
