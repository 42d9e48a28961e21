"""Every private TensorFlow API npu_bridge uses still exists in this TensorFlow (one test per API, named after
it: a release that renames or drops one fails exactly that test), the accessors do what the runtime needs, and
nothing outside npu_bridge/tf_private.py reaches into TensorFlow's private names."""
import ast
import importlib
import pathlib

import pytest
import tensorflow as tf

from npu_bridge import tf_private

v1 = tf.compat.v1
PACKAGE = pathlib.Path(tf_private.__file__).resolve().parent

# Private-looking accesses outside tf_private that are not TensorFlow's, each with why (file, expression).
NOT_TENSORFLOW = {
    ("__init__.py", "sys._getframe"): "the standard library's caller frame",
    ("core/options.py", "sys._getframe"): "the standard library's caller frame",
    ("tf1compat/removed.py", "sys._getframe"): "the standard library's caller frame",
    ("core/graph.py", "node._n_data"): "npu_bridge's own graph model",
    ("core/precision/decide.py", "decision._replace"): "a namedtuple's public _replace",
    ("core/precision/rules.py", "fallback._replace"): "a namedtuple's public _replace",
    ("tf1compat/contrib/seq2seq/beam_search_decoder.py", "final_state._replace"):
        "BeamSearchDecoderState is a namedtuple: its public _replace",
    ("estimator/npu/npu_estimator.py", "spec._replace"): "EstimatorSpec is a namedtuple: its public _replace",
    ("estimator/npu/npu_hook.py", "util._check_iterations"): "npu_bridge's own estimator.npu.util",
    ("estimator/npu/npu_hook.py", "util._iterations_var"): "npu_bridge's own estimator.npu.util",
    ("runtime/activation.py", "base._npu_emulation"): "an attribute npu_bridge itself adds to BaseSession",
    ("runtime/activation.py", "base._npu_in_job"): "an attribute npu_bridge itself adds to BaseSession",
    ("runtime/activation.py", "base._make_callable_from_options"):
        "one of the BaseSession methods activation replaces (ACCESSED checks TensorFlow still has it)",
    ("runtime/emulated.py", "getattr(tf_sess, '_npu_emulation', None)"): "the attribute activation adds",
    ("tf1compat/contrib/tpu/cpu_estimator.py", "instance._tpu_batch_sizes"): "npu_bridge's own attribute",
    ("tf1compat/estimator/exporting.py", "estimator._call_model_fn"): "npu_bridge's own Estimator",
    ("tf1compat/estimator/exporting.py", "estimator._new_graph"): "npu_bridge's own Estimator",
    ("tf1compat/estimator/run_config.py", "new._save_checkpoints_steps"): "npu_bridge's own RunConfig",
    ("tf1compat/estimator/run_config.py", "new._save_checkpoints_secs"): "npu_bridge's own RunConfig",
    ("tf1compat/estimator/run_config.py", "getattr(self, '_evaluation_master', '')"): "npu_bridge's own RunConfig",
    ("tf1compat/contrib/removed.py", "module._MODULE_PATHS"):
        "the set of names npu_bridge's own contrib module keeps as ModulePaths",
    ("tf1compat/removed.py", "training_module.Model._layers"):
        "puts back the private name TF 1.15 scripts read, as a property naming its replacement",
}


def _package_trees():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "tf_private.py":
            yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _private_name(name):
    return isinstance(name, str) and name.startswith("_") and not name.startswith("__")


def _private_accesses(tree):
    """Expressions reaching a private name of an object other than self / cls / super(): `x._name`,
    getattr / hasattr / setattr / delattr(x, "_name"), `x.__dict__["_name"]`, `from tensorflow... import _name`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private_name(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls") or \
                    isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
                continue
            yield ast.unparse(node)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("getattr", "hasattr", "setattr", "delattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and _private_name(node.args[1].value):
            yield ast.unparse(node)
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("__dict__") \
                and isinstance(node.slice, ast.Constant) and _private_name(node.slice.value):
            yield ast.unparse(node)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow"):
            yield from (f"from {node.module} import {alias.name}" for alias in node.names if _private_name(alias.name))


# Classes reading a private member through `self` that neither they nor a base class of their module set, when
# the member is npu_bridge's own (file, class, member) -> why. Every other such member is a TensorFlow base class's
# and must be an ACCESSED entry (by its name), so a release that renames it fails by name.
OWN_MEMBERS = {
    ("tf1compat/contrib/tpu/cpu_estimator.py", "TPUEstimator", "_tpu_batch_sizes"): "set by cpu_estimator.build",
}


def _inherited_private_reads(tree):
    """(class, member) for each `self._member` a class reads but neither it nor a base or subclass of its module
    assigns (or defines)."""
    classes = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}

    def own(cls, seen=()):
        names = {node.name for node in ast.walk(cls) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        names |= {target.id for node in cls.body if isinstance(node, ast.Assign) for target in node.targets
                  if isinstance(target, ast.Name)}
        names |= {node.attr for node in ast.walk(cls) if isinstance(node, ast.Attribute)
                  and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == "self"}
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                names |= own(classes[base.id], (*seen, cls.name))
        return names

    def derives(cls, ancestor):
        bases = [classes[base.id] for base in cls.bases if isinstance(base, ast.Name) and base.id in classes]
        return any(base is ancestor or derives(base, ancestor) for base in bases)

    for cls in classes.values():
        assigned = own(cls).union(*(own(sub) for sub in classes.values() if derives(sub, cls)))
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and _private_name(node.attr) and node.attr not in assigned:
                yield cls.name, node.attr


def _tensorflow_python_imports():
    """(file, module, name) of every `from tensorflow.python... import name` in the package outside tf_private."""
    for where, tree in _package_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow.python"):
                yield from ((where, node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Import):
                yield from ((where, alias.name, None) for alias in node.names
                            if alias.name.startswith("tensorflow.python"))


def test_no_private_tensorflow_access_outside_tf_private():
    found = {(where, access) for where, tree in _package_trees() for access in _private_accesses(tree)}
    assert sorted(found - set(NOT_TENSORFLOW)) == [], "reach these through npu_bridge/tf_private.py"
    assert sorted(set(NOT_TENSORFLOW) - found) == [], "allowed accesses that no longer exist: remove them"


def test_members_subclasses_read_of_their_tensorflow_base_are_accessed_entries():
    accessed = {api.rpartition(".")[2] for api in tf_private.ACCESSED}
    found = {(where, cls, member) for where, tree in _package_trees() for cls, member in _inherited_private_reads(tree)}
    assert sorted(item for item in found - set(OWN_MEMBERS) if item[2] not in accessed) == []
    assert sorted(set(OWN_MEMBERS) - found) == [], "own members no longer read: remove them"


def test_every_internal_module_imported_is_listed_with_why():
    modules = {module for _, module, _ in _tensorflow_python_imports()}
    assert sorted(modules - set(tf_private.INTERNAL_MODULES)) == []
    assert sorted(set(tf_private.INTERNAL_MODULES) - modules) == [], "listed modules nothing imports any more"


@pytest.mark.parametrize("name", sorted({f"{module}.{name}" if name else module
                                         for _, module, name in _tensorflow_python_imports() if name != "*"}))
def test_tensorflow_still_exports(name):
    module, _, attribute = name.rpartition(".")
    try:
        importlib.import_module(name)
    except ImportError:
        assert hasattr(importlib.import_module(module), attribute)


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


# Private names tf_private.py touches that need no ACCESSED entry, each with why.
OPTIONAL_IN_TF_PRIVATE = {
    "_outputs": "restore_operation_outputs adds it where TensorFlow dropped it (hasattr first)",
    "_model_dir": "set_estimator_config writes it only where an Estimator keeps one (hasattr first)",
}
# The raw C API modules: reached only through tf_private's `c_api` and `c_api_util`, whose every function is an
# ACCESSED entry.
C_API_MODULES = {"c_api": "pywrap_tf_session", "c_api_util": "c_api_util"}


def _private_names(tree):
    """The private member names an AST reaches: `x._name`, and every private name spelled as a string (getattr /
    hasattr(x, "_name"), `x.__dict__["_name"]`, the names the `_attribute(owner, name)` helper reads)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private_name(node.attr):
            yield node.attr
        elif isinstance(node, ast.Constant) and _private_name(node.value) and node.value.isidentifier():
            yield node.value


def test_every_private_name_tf_private_reaches_is_an_accessed_entry():
    """ACCESSED is the list a new TensorFlow is checked against: an access tf_private makes without an entry would
    break at a user's first run instead of in test_tensorflow_still_has[<its name>]."""
    tree = ast.parse(pathlib.Path(tf_private.__file__).read_text(encoding="utf-8"))
    own = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    listed = {part for api in tf_private.ACCESSED for part in api.replace(" ", ".").split(".")}
    reached = set(_private_names(tree)) - own
    assert sorted(reached - listed - set(OPTIONAL_IN_TF_PRIVATE)) == []
    assert sorted(set(OPTIONAL_IN_TF_PRIVATE) - reached) == [], "optional names tf_private no longer reaches"


def _c_api_calls(tree):
    """`c_api.NAME` / `c_api_util.NAME` of an AST as their ACCESSED keys."""
    return {f"{C_API_MODULES[node.value.id]}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in C_API_MODULES}


def test_every_raw_c_api_function_called_is_an_accessed_entry():
    trees = [tree for _, tree in _package_trees()]
    trees.append(ast.parse(pathlib.Path(tf_private.__file__).read_text(encoding="utf-8")))
    called = set().union(*map(_c_api_calls, trees))
    assert called and sorted(called - set(tf_private.ACCESSED)) == []


def _raw_c_api_imports(tree):
    """Imports of TensorFlow's C API wrappers (pywrap_* modules, c_api_util) in an AST."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow"):
            modules = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names if alias.name.startswith("tensorflow")]
        else:
            continue
        yield from (module for module in modules
                    if any(part.lstrip("_").startswith("pywrap") or part == "c_api_util" for part in module.split(".")))


def test_only_tf_private_imports_tensorflow_s_c_api():
    """The C API modules live in a package INTERNAL_MODULES lists for other reasons (tensorflow.python.client):
    the module check alone would let a second copy of them in."""
    assert sorted((where, module) for where, tree in _package_trees() for module in _raw_c_api_imports(tree)) == []


def test_the_scans_find_the_private_accesses_they_look_for():
    """Each scan above finds its target in code written to break it (a scan that finds nothing passes anyway)."""
    broken = ast.parse("from tensorflow.python.client import pywrap_tf_session as c_api\n"
                       "import tensorflow.python._pywrap_tfe\n"
                       "graph._c_graph\n"
                       "with graph._session_run_lock():\n    pass\n"
                       "op._add_control_input(other)\n"
                       "op._set_attr('T', value)\n"
                       "getattr(op, '_c_op')\n"
                       "c_api.TF_NewOperation(graph, 'Cast', 'c')\n")
    assert sorted(_private_accesses(broken)) == ["getattr(op, '_c_op')", "graph._c_graph", "graph._session_run_lock",
                                                 "op._add_control_input", "op._set_attr"]
    assert list(_raw_c_api_imports(broken)) == ["tensorflow.python.client.pywrap_tf_session",
                                                "tensorflow.python._pywrap_tfe"]
    assert _c_api_calls(broken) == {"pywrap_tf_session.TF_NewOperation"}
    assert {"_c_graph", "_set_attr", "_c_op"} <= set(_private_names(broken))
