"""Classify how a ModelZoo script run under npu-run ended, from its exit status and its output.

The census (tools/modelzoo_census.py) runs each entry script with no data and a time limit; what matters is the
first thing that stopped it, read from the last traceback it printed:

    tf_api       an AttributeError / ImportError naming a TensorFlow 1.15 API (tensorflow, contrib, keras,
                 estimator, or tf_slim, which serves contrib's slim and layers) that is missing here, or one
                 that npu_bridge's TF 1.15 compatibility layer (npu_bridge.tf1compat) lacks or refuses; and any
                 other error raised inside that layer (a refusal such as Keras 2's removed multi_gpu_model, or a
                 fault in how it provides the API): the script stopped at a TF 1.15 API either way
    npu_bridge   a traceback whose last frame is inside the rest of the npu_bridge package, or an import of a
                 Huawei npu_bridge module or name this package lacks
    third_party  ModuleNotFoundError for a module that is neither TensorFlow's nor npu_bridge's (a package the user
                 installs, or a module of the script's own folder)
    data         the script looked for its data (file or folder not found, an empty dataset, a download
                 without network)
    flags        the command line was refused (argparse usage error, absl flags error), or the shell script cd's
                 into a folder this machine has not (set up for the port's own machine; tools/modelzoo_census.py)
    ran          exited 0 (unless its last line says its data is missing: data), or still running when the
                 time limit struck
    other        any other failure (kept with its last line, to be read)

Kept apart from the runner so it can be unit-tested on small fake tracebacks, in CI, without a ModelZoo checkout.
"""
import re
from dataclasses import dataclass

CATEGORIES = ("tf_api", "npu_bridge", "third_party", "data", "flags", "ran", "other")

_TF_FAMILY = re.compile(r"\b(tensorflow|tensorflow_core|tf_keras|keras|contrib|estimator|tensorflow_estimator|"
                        r"tf_slim)\b"
                        r"|\btf\.")
_TF_TOP_MODULES = ("tensorflow", "tensorflow_core", "tensorflow_estimator", "tf_keras", "keras", "tf_slim")
_NPU_BRIDGE_NAME = re.compile(r"\bnpu_bridge\b")
_TF1COMPAT = re.compile(r"npu_bridge\.tf1compat|TF 1\.15 compatibility layer")
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)|KeyError|StopIteration)"
                             r"(?::\s?(.*))?$")
_FRAME_LINE = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_MISSING_MODULE = re.compile(r"No module named '([^']+)'")
_GRAPH_ERROR = "tensorflow.python.framework.errors_impl."      # the errors a TensorFlow op raises when run
_DATA_EXCEPTIONS = ("FileNotFoundError", "NotFoundError", "IsADirectoryError", "NotADirectoryError",
                    "DataLossError", "OutOfRangeError", "EOFError")
_DATA_WORDS = re.compile(r"no such file|not found|does not exist|doesn't exist|no files? (?:match|found)|"
                         r"empty (?:dataset|directory|folder|list)|no (?:data|images|samples|records)|"
                         r"cannot (?:open|find|identify|read)|unable to open|failed to open|"
                         r"num_samples should be a positive|must be (?:a )?directory|"
                         r"URL fetch failure|Name or service not known|urlopen error|Failed to establish a new "
                         r"connection|"
                         # an empty list of data files, turned into a float32 tensor
                         r"must contain `tf\.string` elements\. Got `tf\.float32`|'ReadFile' Op has type float32",
                         re.IGNORECASE)
_FLAGS_WORDS = re.compile(r"error: (?:unrecognized arguments|the following arguments are required|argument )|"
                          r"UnrecognizedFlagError|IllegalFlagValueError|Flags parsing error|"
                          r"FATAL Flags|Unknown command line flag", re.IGNORECASE)


@dataclass
class Failure:
    """The first failure of one run: its category, the exception line and where it was raised."""
    category: str
    exception: str          # "ImportError: cannot import name ...", or the last output line when no traceback
    where: str = ""         # "file:line" of the traceback's last frame


def last_traceback(output):
    """(frames, exception line) of the last traceback in `output`: frames as (file, line) pairs; ([], "") when
    the output holds no traceback."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return [], ""
    frames, exception = [], ""
    for line in lines[starts[-1] + 1:]:
        frame = _FRAME_LINE.match(line)
        if frame:
            frames.append((frame.group(1), int(frame.group(2))))
        elif not line.startswith((" ", "\t")) and _EXCEPTION_LINE.match(line.strip()):
            exception = line.strip()
            break
    return frames, exception


def _last_line(output):
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _is_inside(path, package_dir):
    return package_dir is not None and path.replace("\\", "/").startswith(package_dir.rstrip("/") + "/")


def _raising_frame(frames, npu_bridge_dir):
    """The frame that raised: the last one, passing over the import machinery (importlib's frames, and
    npu-run's import hook in npu_bridge/launcher.py, which every import of the user's code goes through)."""
    hook = (npu_bridge_dir or "").rstrip("/") + "/launcher.py"
    for path, line in reversed(frames):
        if not path.startswith("<frozen importlib") and path != hook:
            return path, line
    return frames[-1] if frames else None


def _is_tf_api(name, message):
    """An import or attribute error naming a TensorFlow 1.15 API (tensorflow, contrib, keras, estimator)."""
    if name in ("ModuleNotFoundError", "ImportError"):
        missing = _MISSING_MODULE.search(message)
        if missing:
            return missing.group(1).split(".")[0] in _TF_TOP_MODULES
        return bool(_TF_FAMILY.search(message))
    if name == "AttributeError":
        return bool(_TF_FAMILY.search(message))
    return "is not provided" in message and bool(_TF_FAMILY.search(message))


def _is_missing_npu_bridge_name(name, message):
    """An import of a Huawei npu_bridge module or name this package does not have."""
    if name == "ModuleNotFoundError":
        missing = _MISSING_MODULE.search(message)
        return bool(missing) and missing.group(1).split(".")[0] == "npu_bridge"
    return name in ("ImportError", "AttributeError") and bool(_NPU_BRIDGE_NAME.search(message))


def classify(returncode, output, timed_out=False, npu_bridge_dir=None):
    """The Failure of a run that exited with `returncode` (None if killed at the time limit) printing `output`
    (stdout and stderr together). `npu_bridge_dir` is the package folder, for the npu_bridge category."""
    frames, exception = last_traceback(output)
    raising = _raising_frame(frames, npu_bridge_dir)
    where = f"{raising[0]}:{raising[1]}" if raising else ""
    if timed_out:
        return Failure("ran", exception or _last_line(output), where)
    if returncode == 0:     # a script that reports its data missing and exits 0 (Glow, MGCNN) did not run
        line = _last_line(output)
        return Failure("data" if _DATA_WORDS.search(line) else "ran", exception or line, where)
    if _FLAGS_WORDS.search(output) and (returncode == 2 or not exception or "Flag" in exception):
        return Failure("flags", _flags_line(output), where)
    if not exception:
        line = _last_line(output)
        category = "data" if _DATA_WORDS.search(line) else "other"
        return Failure(category, line or f"exit status {returncode}, no output", where)
    name, _, message = exception.partition(":")
    name = name.rsplit(".", 1)[-1]
    message = message.strip()
    if name in ("FileNotFoundError", "NotFoundError"):     # even when npu_bridge raised it (mnist's read_data_sets)
        return Failure("data", exception, where)
    if exception.startswith(_GRAPH_ERROR) and _DATA_WORDS.search(_graph_error_messages(output)):
        return Failure("data", exception, where)        # a graph op found no data, even when npu_bridge's run re-raised it
    if _TF1COMPAT.search(message):
        return Failure("tf_api", exception, where)
    if _is_missing_npu_bridge_name(name, message):
        return Failure("npu_bridge", exception, where)
    if _is_tf_api(name, message):
        return Failure("tf_api", exception, where)
    if name == "ModuleNotFoundError":
        return Failure("third_party", exception, where)
    if raising and npu_bridge_dir is not None and _is_inside(raising[0], f"{npu_bridge_dir.rstrip('/')}/tf1compat"):
        return Failure("tf_api", exception, where)
    if raising and _is_inside(raising[0], npu_bridge_dir):
        return Failure("npu_bridge", exception, where)
    if name in _DATA_EXCEPTIONS or _DATA_WORDS.search(message) or _DATA_WORDS.search(_after(output, exception)):
        return Failure("data", exception, where)
    return Failure("other", exception, where)


def _graph_error_messages(output):
    """Every TensorFlow op error line of the output (with the line after each): a session run re-raises the op's
    error as 'Graph execution error:', the op's own message ('No files matched pattern') is in the chained one."""
    lines = output.splitlines()
    return "\n".join(f"{line}\n{lines[i + 1] if i + 1 < len(lines) else ''}" for i, line in enumerate(lines)
                     if line.startswith(_GRAPH_ERROR))


def _after(output, exception):
    """What the output says after the exception line (autograph's "in user code:" puts the real message there)."""
    return "\n".join(output[output.rfind(exception) + len(exception):].splitlines()[:20])


def _flags_line(output):
    for line in reversed(output.splitlines()):
        if _FLAGS_WORDS.search(line):
            return line.strip()
    return _last_line(output)
