"""What the precision pass decided, op by op, in a form a person hunting an accuracy problem can read."""
import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import NamedTuple

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
    casts: tuple[str, ...] = ()
    emulated: bool = False
    origin: str = ""


# A Report's row builder: (the OpRecords in graph order, {gray op: the producer it followed}), called once.
Rows = Callable[[], tuple[list[OpRecord], dict[str, str]]]


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

    def __init__(self, mode_name: str, soc: str, reduced_dtype: str, rows: Rows | None, n_ops: int,
                 n_reduced: int, n_casts: int, warnings: tuple[str, ...] = (), overflow_mode: str = "inf_nan",
                 n_clamped: int = 0, growth: "Growth | None" = None) -> None:
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
        self._growth = growth       # instead of rows: what an increment added to another Report
        self._records: list[OpRecord] | None = None
        self._followed: dict[str, str] = {}
        self._by_name: dict[str, OpRecord] | None = None

    def _build(self) -> list[OpRecord]:
        if self._records is None:
            if self._growth is not None:
                self._records, self._followed = _grown_rows(self._growth)
            else:
                assert self._make_rows is not None, "a Report needs rows or a growth"
                self._records, self._followed = self._make_rows()
            self._make_rows = self._growth = None
        return self._records

    @property
    def unbuilt_growth(self) -> "Growth | None":
        """The Growth this Report's rows are still to be built from (a Report an increment made), else None."""
        return self._growth if self._records is None else None

    @property
    def followed(self) -> dict[str, str]:
        """{gray op name: the producer whose dtype it followed}."""
        self._build()
        return self._followed

    @property
    def records(self) -> list[OpRecord]:
        return self._build()

    def by_name(self, name: str) -> OpRecord:
        """The record of op `name`; a KeyError naming the closest op names when the graph has none of that name."""
        if self._by_name is None:
            self._by_name = {r.name: r for r in self.records}
        record = self._by_name.get(name)
        if record is None:
            close = difflib.get_close_matches(str(name), self._by_name, n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise KeyError(f"the report has no op named {name!r}{hint}")
        return record

    def reduced(self) -> list[OpRecord]:
        """Records of the ops that compute in the reduced dtype: the first place to look for lost accuracy."""
        return [r for r in self.records if r.decision == self.reduced_dtype]

    def explain(self, name: str) -> str:
        """Why `name` computes in its dtype, walking back through the producers gray ops followed.

        The last line is the op that set the dtype for the whole chain (a white or black op, a fallback rule,
        a keep_dtype or customize_dtypes entry): the place to change when a reduced op breaks accuracy.
        """
        lines: list[str] = []
        seen: set[str] = set()
        while name and name not in seen:
            seen.add(name)
            record = self.by_name(name)
            lines.append(f"{record.name} [{record.tf_type} -> {record.ir_type}, {record.list}]: {record.decision}. "
                         f"{record.reason}")
            name = self.followed.get(name, "")
        return "\n".join(lines)

    def summary(self) -> str:
        overflow = "saturation mode" if self.overflow_mode == "saturation" else "INF/NaN mode"
        return (f"NpuOptimizer {self.mode_name}: {self.n_reduced}/{self.n_ops} ops reduced to "
                f"{self.reduced_dtype}, {self.n_casts} casts, {overflow}")

    def __repr__(self) -> str:
        """What `print(last_report(sess))` shows: the summary, the soc, and where to look next."""
        warned = f", {len(self.warnings)} warnings" if self.warnings else ""
        return (f"<Report {self.summary()} on {self.soc}{warned}; .table() lists the ops, .explain(name) walks one "
                f"op's decision back, .to_json() has everything>")

    def table(self, everything: bool = False) -> str:
        """One line per op with float work (every op if `everything`): name, types, list, decision, reason."""
        rows = [r for r in self.records if everything or r.decision != "unchanged"]
        lines = [self.summary()]
        for r in rows:
            mark = " (float32 between casts)" if r.emulated else ""
            lines.append(f"{r.name} [{r.tf_type} -> {r.ir_type}, {r.list}]: {r.decision}{mark}. {r.reason}")
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({
            "mode": self.mode_name, "soc": self.soc, "reduced_dtype": self.reduced_dtype,
            "overflow_mode": self.overflow_mode, "n_clamped": self.n_clamped,
            "n_ops": self.n_ops, "n_reduced": self.n_reduced, "n_casts": self.n_casts,
            "warnings": list(self.warnings), "records": [asdict(r) for r in self.records],
        }, indent=1)


class Growth(NamedTuple):
    """The rows an increment (core.precision.incremental) adds to the Report of the graph it grew."""

    base: Report                        # the grown graph's Report before the increment
    records: tuple[OpRecord, ...]       # the new ops', in graph order
    replaced: dict[str, OpRecord]       # old ops' records decided again (a Relu a new ReluGrad reads)
    followed: dict[str, str]            # the followed producers of both


def _grown_rows(growth: Growth) -> tuple[list[OpRecord], dict[str, str]]:
    """The rows of a grown Report, walking back its chain of growths to the first Report built otherwise, without
    recursion: a script adding one op per run makes a chain as long as its runs."""
    chain = [growth]
    while (link := chain[-1].base.unbuilt_growth) is not None:
        chain.append(link)
    base = chain[-1].base
    records, followed = list(base.records), dict(base.followed)
    replaced: dict[str, OpRecord] = {}
    for link in reversed(chain):
        records.extend(link.records)
        replaced.update(link.replaced)
        for name in link.replaced:
            followed.pop(name, None)
        followed.update(link.followed)
    return [replaced.get(record.name, record) for record in records], followed


@dataclass(frozen=True)
class RewriteResult:
    graph_def: graph_pb2.GraphDef
    report: Report
    tensor_map: Mapping[str, TensorRef]
