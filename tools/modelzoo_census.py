"""Census of Ascend ModelZoo's TensorFlow training scripts: how far each gets under npu-run, with no data.

    python tools/modelzoo_census.py --modelzoo DIR [--extract-from MIRROR] [--sample 60 --seed 0] \
        [--timeout 90] [--jobs 2] [--out census.tsv] [--logs LOGDIR] [--python PYTHON]

DIR is a checkout of Ascend/ModelZoo-TensorFlow (the folder holding `TensorFlow/`). `--extract-from MIRROR` first
writes one from a bare clone of that repository: its `TensorFlow/` files of at most 2 MB (code, shell scripts,
configs; the clone may lack the large blobs, which `git archive` then refuses).

A training folder is the nearest folder above a script importing npu_bridge that has a `test/*.sh`. Its entry
script is the one its 1p shell script starts (train_performance_1p.sh first, then train_full_1p.sh, then any
other): the `python3 X.py --flags` line, continuation lines joined, shell variables resolved from the script's own
plain assignments and exports (`pwd` is the test folder until the script cd's elsewhere), and every data / path /
dir variable without a value pointed at an empty temporary folder of its own. Each entry script runs as
`PYTHON -m npu_bridge X.py --flags` (what npu-run runs; the npu_bridge on PYTHONPATH, if any, is the one run)
from the folder the shell script cd's to, with RANK_SIZE=1, DEVICE_ID=0, and that folder and the training folder
on PYTHONPATH (as the READMEs have users export it), for at most --timeout seconds; the first failure is classified
by tools/census_failures.py. Not part of CI: it needs the checkout and takes up to --sample * --timeout / --jobs
seconds.

The TSV has one row per folder (category, elapsed seconds, exit status, exception line, where it was raised, the
last output line, the command); the summary printed at the end counts the categories and groups the first
failures. --logs keeps each script's whole output; `--reclassify --out TSV --logs LOGDIR` classifies a finished
run again (after the classifier changed) without running anything.
"""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# census_failures is a sibling module of this tool (tools/ is not a package)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from census_failures import CATEGORIES, classify

_IMPORTS_NPU_BRIDGE = re.compile(rb"^\s*(?:from|import)\s+npu_bridge\b", re.MULTILINE)
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=(.*?)\s*(?:#.*)?$")
_PYTHON_CALL = re.compile(r"(?:^|[\s;&|(])(?:nohup\s+)?(?:\S*/)?python(?:3(?:\.\d+)?)?\s+(?:-u\s+)?(\S+\.py)\b(.*)$")
_VARIABLE = re.compile(r"\$\{(\w+)(?::?[-=]([^}]*))?\}|\$([A-Za-z_]\w*|\d)")
_PATH_LIKE = re.compile(r"path|dir|data|ckpt|file|root|url", re.IGNORECASE)
_SHELL_PREFERENCE = ("train_performance_1p.sh", "train_full_1p.sh")
_FD_REDIRECTION = re.compile(r"(?:^|(?<=\s))\d+(?=[<>])")


@dataclass
class Entry:
    folder: Path                # the training folder
    shell_script: Path          # the test/*.sh read
    cwd: Path                   # where the shell script runs python
    script: Path | None         # the entry script; None when none was found (why: in `problem`)
    args: list
    problem: str = ""
    problem_category: str = "other"     # the census category of `problem`
    environment: dict = field(default_factory=dict)     # what the shell script exports (PYTHONPATH, ...)


def extract(mirror, destination, largest=2_000_000):
    """Write the TensorFlow/ files of the bare clone `mirror` (HEAD) of at most `largest` bytes to `destination`."""
    listing = subprocess.run(["git", "-C", mirror, "ls-tree", "-r", "-l", "HEAD", "TensorFlow"], capture_output=True,
                             text=True, check=True).stdout
    wanted = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, blob, size = meta.split()
        if kind == "blob" and size.isdigit() and int(size) <= largest:
            wanted.append((blob, path))
    reader = subprocess.Popen(["git", "-C", mirror, "cat-file", "--batch"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    for blob, path in wanted:
        reader.stdin.write(blob.encode() + b"\n")
        reader.stdin.flush()
        header = reader.stdout.readline().split()
        if header[1] == b"missing":
            continue
        content = reader.stdout.read(int(header[2]))
        reader.stdout.read(1)
        target = Path(destination, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    reader.stdin.close()
    reader.wait()


def training_folders(modelzoo):
    """Every training folder under MODELZOO/TensorFlow (a folder with test/*.sh above a script importing
    npu_bridge), sorted."""
    root = Path(modelzoo) / "TensorFlow"
    if not root.is_dir():
        raise SystemExit(f"modelzoo_census: {modelzoo} has no TensorFlow/ folder: expected a checkout of "
                         "Ascend/ModelZoo-TensorFlow")
    with_tests = {shell.parent.parent for shell in root.rglob("test/*.sh")}
    folders = set()
    for script in root.rglob("*.py"):
        try:
            if not _IMPORTS_NPU_BRIDGE.search(script.read_bytes()):
                continue
        except OSError:
            continue
        for parent in script.parents:
            if parent in with_tests:
                folders.add(parent)
                break
            if parent == root:
                break
    return sorted(folders)


def _shell_script(folder):
    scripts = sorted((folder / "test").glob("*.sh"))
    for preferred in _SHELL_PREFERENCE:
        for shell in scripts:
            if shell.name.lower() == preferred:
                return shell
    one_device = [shell for shell in scripts if "1p" in shell.name.lower()]
    return (one_device or scripts)[0]


def _logical_lines(text):
    """The shell script's lines with `\\` continuations joined and comment lines dropped."""
    joined = re.sub(r"\\\r?\n", " ", text)
    return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


_SCRIPT_DIR = re.compile(r"""\$\(\s*cd\s+["']?\$\(\s*dirname\s+["']?\$\{?(?:0|BASH_SOURCE[^}"')]*)\}?["']?\s*\)["']?"""
                         r"""\s*(?:;|&&)\s*pwd\s*\)""")
_PWD = re.compile(r"`pwd`|\$\(\s*pwd\s*\)")


class _ShellVariables:
    """The values the census gives a shell script's variables (see the module docstring)."""

    def __init__(self, test_dir, data_dir):
        self._test_dir = str(test_dir)
        self._data_dir = str(data_dir)
        self.values = {"ASCEND_DEVICE_ID": "0", "DEVICE_ID": "0", "RANK_ID": "0", "RANK_SIZE": "1",
                       "RANK_ID_START": "0", "0": str(test_dir / "script.sh"),
                       "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        self.exported = {}

    def assign(self, name, raw, cwd, export=False):
        """Record `name=raw` run in folder `cwd`; a value computed at run time (from the arguments, from other
        commands) gets none here, except the script's own folder and `pwd`."""
        value = _SCRIPT_DIR.sub(self._test_dir, raw.strip())
        value = _PWD.sub(str(cwd), value)
        if "`" in value or "$(" in value:
            return
        self.values[name] = self.expand(value.replace('"', "").replace("'", ""))
        if export or name in self.exported:
            self.exported[name] = self.values[name]

    def value(self, name, default=None):
        value = self.values.get(name, "")
        if value:
            return value
        if default:
            return self.expand(default)
        return self._data_dir if _PATH_LIKE.search(name) else ""

    def expand(self, text):
        return _VARIABLE.sub(lambda match: self.value(match.group(1) or match.group(3), match.group(2)), text)


def find_entry(folder, data_dir):
    """The Entry its shell script would run, with variables resolved (see the module docstring)."""
    shell = _shell_script(folder)
    variables = _ShellVariables(shell.parent, data_dir)
    cwd = shell.parent
    for line in _logical_lines(shell.read_text(errors="replace")):
        call = _PYTHON_CALL.search(line)
        if call:
            return _entry(folder, shell, cwd, variables, call.group(1), call.group(2))
        assignment = _ASSIGNMENT.match(line)
        if assignment and not line.lstrip().startswith(("if", "elif")):
            variables.assign(assignment.group(1), assignment.group(2), cwd, line.lstrip().startswith("export"))
            continue
        change = re.match(r"^\s*cd\s+(\S+)", line)
        if change:
            target = Path(variables.expand(change.group(1).strip("\"'")))
            cwd = (cwd / target).resolve() if not target.is_absolute() else target.resolve()
            if not cwd.is_dir():    # a setup step for a machine laid out as the port's (a python3.7 site-packages)
                return Entry(folder, shell, shell.parent, None, [], problem_category="flags",
                             problem=f"{shell.name} cd's into {cwd}, which does not exist: {line.strip()}")
    return Entry(folder, shell, cwd, None, [], problem=f"no python call in {shell.name}")


def _entry(folder, shell, cwd, variables, script_text, rest):
    # a file descriptor is a number written against its redirection (`1>log`, `2>&1`); `--epochs 2 > log` keeps 2
    text = _FD_REDIRECTION.sub("", variables.expand(rest))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:      # an unbalanced quote: read what comes before it
        tokens = text.split()
    args = []
    for token in tokens:
        if token.startswith((">", "<", "&", "|", ";")):     # a redirection, background, pipe or next command
            break
        args.append(token)
    script = Path(variables.expand(script_text))
    for base in (cwd, folder, shell.parent):
        candidate = script if script.is_absolute() else base / script
        if candidate.is_file():
            cwd = candidate.parent if base is shell.parent else cwd
            return Entry(folder, shell, cwd, candidate.resolve(), args, environment=variables.exported)
    matches = sorted(folder.rglob(script.name))     # the .sh cd's somewhere the census could not follow
    if len(matches) == 1:
        return Entry(folder, shell, matches[0].parent, matches[0].resolve(), args, environment=variables.exported)
    return Entry(folder, shell, cwd, None, args, problem=f"{script_text} named in {shell.name} not found")


# What `python -m npu_bridge` runs, except that when PYTHONPATH provides npu_bridge, an editable install's finder is
# dropped first: it would serve npu_bridge's direct submodules that the tree under test lacks from the installed
# checkout, mixing two versions in one run.
_RUN_NPU_BRIDGE = ("import importlib.machinery, runpy, sys\n"
                   "if importlib.machinery.PathFinder.find_spec('npu_bridge') is not None:\n"
                   "    sys.meta_path[:] = [finder for finder in sys.meta_path\n"
                   "                        if not getattr(finder, '__module__', '').startswith('__editable__')]\n"
                   "runpy.run_module('npu_bridge', run_name='__main__', alter_sys=True)\n")
_RUNNING = set()       # process groups of the scripts running now, killed if the census itself is stopped


def run_entry(entry, python, timeout, npu_bridge_dir, log_dir=None):
    """Run one entry script under npu-run; the row for the TSV (its whole output goes to log_dir, if given)."""
    started = time.monotonic()
    if entry.script is None:
        return _row(entry, entry.problem_category, 0.0, "", entry.problem, "", "")
    command = [python, "-c", _RUN_NPU_BRIDGE, str(entry.script), *entry.args]
    environment = {**os.environ, **entry.environment, "TF_CPP_MIN_LOG_LEVEL": "2", "RANK_SIZE": "1", "RANK_ID": "0",
                   "DEVICE_ID": "0", "ASCEND_DEVICE_ID": "0", "PYTHONUNBUFFERED": "1"}
    # the npu_bridge under test first (a script's own export may drop it), then the folder's own packages, as
    # READMEs have users `export PYTHONPATH=...:/path/to/model`
    environment["PYTHONPATH"] = os.pathsep.join(part for part in (os.environ.get("PYTHONPATH"),
                                                                  environment.get("PYTHONPATH"), str(entry.cwd),
                                                                  str(entry.folder)) if part)
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(command, cwd=entry.cwd, stdout=output, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=environment, start_new_session=True)
        _RUNNING.add(process.pid)
        timed_out = False
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out, returncode = True, None
        finally:
            _kill_group(process.pid)
            process.wait()
        output.seek(0)
        text = output.read().decode(errors="replace")
    if log_dir is not None:
        Path(log_dir, _relative(entry.folder).replace("/", "__") + ".log").write_text(text)
    failure = classify(returncode, text, timed_out, npu_bridge_dir)
    elapsed = time.monotonic() - started
    status = "timeout" if timed_out else str(returncode)
    return _row(entry, failure.category, elapsed, status, failure.exception, failure.where, _last_line(text),
                [python, "-m", "npu_bridge", str(entry.script), *entry.args])


def _kill_group(pid):
    """Kill the script and whatever it started (it runs in a session of its own)."""
    _RUNNING.discard(pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _last_line(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _relative(folder):
    """The folder as the TSV names it: from TensorFlow/ on."""
    parts = folder.parts
    return "/".join(parts[parts.index("TensorFlow"):]) if "TensorFlow" in parts else str(folder)


def _row(entry, category, elapsed, status, exception, where, last_line, command=()):
    return {"folder": _relative(entry.folder), "category": category, "elapsed_s": f"{elapsed:.1f}", "status": status,
            "exception": exception[:300], "where": where, "last_line": last_line,
            "command": shlex.join(str(part) for part in command[2:]), "cwd": str(entry.cwd)}


def _write_tsv(rows, path):
    columns = ["folder", "category", "elapsed_s", "status", "exception", "where", "last_line", "command", "cwd"]
    with open(path, "w") as tsv:
        tsv.write("\t".join(columns) + "\n")
        tsv.writelines("\t".join(row[column].replace("\t", " ").replace("\n", " ") for column in columns) + "\n"
                       for row in rows)


def summary(rows):
    """Counts per category, then the first failures grouped by exception line (most frequent first)."""
    counts = collections.Counter(row["category"] for row in rows)
    lines = [f"{len(rows)} training folders: " + ", ".join(f"{category} {counts[category]}"
                                                            for category in CATEGORIES if counts[category])]
    for category in CATEGORIES:
        if category == "ran" or not counts[category]:
            continue
        groups = collections.Counter(_group_key(row["exception"]) for row in rows if row["category"] == category)
        lines.append(f"{category}:")
        lines.extend(f"  {count:3d}  {key}" for key, count in groups.most_common())
    return "\n".join(lines)


def _group_key(exception):
    """The exception line without the parts that differ from script to script (file names, numbers)."""
    return re.sub(r"'/[^']*'|\"/[^\"]*\"", "'PATH'", exception)[:160]


def reclassify(tsv_path, log_dir, python):
    """Classify the rows of `tsv_path` again from the outputs kept in `log_dir`; rewrite it and print the summary."""
    if not log_dir:
        raise SystemExit("modelzoo_census: --reclassify needs the --logs folder of the run")
    with open(tsv_path) as tsv:
        columns = tsv.readline().rstrip("\n").split("\t")
        rows = [dict(zip(columns, line.rstrip("\n").split("\t"))) for line in tsv]
    npu_bridge_dir = _npu_bridge_dir(python)
    for row in rows:
        log = Path(log_dir, row["folder"].replace("/", "__") + ".log")
        if not log.is_file():
            continue
        status = row["status"]
        failure = classify(None if status == "timeout" else int(status), log.read_text(), status == "timeout",
                           npu_bridge_dir)
        row.update(category=failure.category, exception=failure.exception[:300], where=failure.where)
    _write_tsv(rows, tsv_path)
    print(summary(rows))
    return 0


def _npu_bridge_dir(python):
    where_is_npu_bridge = ("import importlib.util; "
                           "print(importlib.util.find_spec('npu_bridge').submodule_search_locations[0])")
    return subprocess.run([python, "-c", where_is_npu_bridge], capture_output=True, text=True,
                          check=True).stdout.strip()


def _empty_folder(parent, index):
    """An empty folder of its own for one script's data paths (a script may write there)."""
    folder = Path(parent) / str(index)
    folder.mkdir()
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modelzoo", help="checkout of Ascend/ModelZoo-TensorFlow (needed unless --reclassify)")
    parser.add_argument("--extract-from", metavar="MIRROR",
                        help="first write DIR from this bare clone of Ascend/ModelZoo-TensorFlow (if DIR is absent)")
    parser.add_argument("--sample", type=int, help="run only N folders drawn at random (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random sample (default 0)")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per script (default 90)")
    parser.add_argument("--jobs", type=int, default=2, help="scripts run at once (default 2)")
    parser.add_argument("--out", default="census.tsv", help="TSV written (default census.tsv)")
    parser.add_argument("--logs", help="folder to write each script's whole output to (FOLDER_NAME.log)")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python whose npu_bridge runs the scripts (default: this one)")
    parser.add_argument("--reclassify", action="store_true",
                        help="run nothing: classify again the runs of --out from their --logs (after the classifier "
                             "changed)")
    args = parser.parse_args(argv)
    if args.reclassify:
        return reclassify(args.out, args.logs, args.python)
    if not args.modelzoo:
        parser.error("--modelzoo DIR is needed to run the census")
    modelzoo = Path(args.modelzoo).resolve()
    if args.extract_from and not modelzoo.exists():
        extract(args.extract_from, modelzoo)
    folders = training_folders(modelzoo)
    if args.sample and args.sample < len(folders):
        folders = sorted(random.Random(args.seed).sample(folders, args.sample))
    npu_bridge_dir = _npu_bridge_dir(args.python)
    print(f"{len(folders)} folders, timeout {args.timeout:g} s, {args.jobs} jobs, npu_bridge from {npu_bridge_dir}",
          flush=True)
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows = _run_all(folders, args, npu_bridge_dir)
    rows.sort(key=lambda row: row["folder"])
    _write_tsv(rows, args.out)
    print(summary(rows))
    return 0


def _run_all(folders, args, npu_bridge_dir):
    with tempfile.TemporaryDirectory(prefix="census-data-") as data_dir:
        entries = [find_entry(folder, _empty_folder(data_dir, index)) for index, folder in enumerate(folders)]
        pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
        futures = [pool.submit(run_entry, entry, args.python, args.timeout, npu_bridge_dir, args.logs)
                   for entry in entries]
        rows = []
        try:
            for future in concurrent.futures.as_completed(futures):
                row = future.result()
                rows.append(row)
                print(f"[{len(rows)}/{len(entries)}] {row['category']:11s} {row['elapsed_s']:>6s}s "
                      f"{row['folder']}: {row['exception'][:120]}", flush=True)
        except BaseException:       # Ctrl-C or SIGTERM: stop the scripts running, start no more
            pool.shutdown(wait=False, cancel_futures=True)
            for pid in list(_RUNNING):
                _kill_group(pid)
            raise
        pool.shutdown()
    return rows


if __name__ == "__main__":
    sys.exit(main())
