"""No comment or document in the repository cites a text outside it: the Ascend facts the code relies on are in
docs/BEHAVIOUR.md (with their sources), and every `BEHAVIOUR.md §N` a file cites is a section that exists there.
The project's research notes and behaviour contract live beside the repository, not in it, so a citation of
them is a dead end for anyone reading a checkout."""
import pathlib
import re

THIS = pathlib.Path(__file__).resolve()
ROOT = THIS.parents[1]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".ini", ".cfg", ".txt", ".sh", ".yml", ".yaml"}
SKIPPED_FOLDERS = {".git", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

# How the documents outside the repository are cited (this file, which names them, is not scanned).
OUTSIDE = re.compile(r"ASCEND_BEHAVIOUR|research(\.md| notes| §| Appendix)|/work/shared")
CITED_SECTION = re.compile(r"BEHAVIOUR(?:\.md)? (§\d+(?:-§\d+)?)")


def _text_files():
    for path in sorted(ROOT.rglob("*")):
        parts = set(path.relative_to(ROOT).parts)
        if path.is_file() and path != THIS and not parts & SKIPPED_FOLDERS and not any(p.endswith(".egg-info") for p in parts) \
                and (path.suffix in TEXT_SUFFIXES or path.parent.name == ".ci"):
            yield path


def _lines(pattern):
    return [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for path in _text_files()
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if pattern.search(line)]


def test_nothing_cites_a_document_outside_the_repository():
    assert _lines(OUTSIDE) == []


def test_every_cited_behaviour_section_exists():
    behaviour = (ROOT / "docs" / "BEHAVIOUR.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (§\d+)", behaviour, re.MULTILINE))
    assert sections, "docs/BEHAVIOUR.md has no '## §N' sections"
    cited = {}
    for line in _lines(CITED_SECTION):
        for span in CITED_SECTION.findall(line):
            first, _, last = span.partition("-")
            for section in (first, last) if last else (first,):
                cited.setdefault(section, line)
    assert {section: line for section, line in cited.items() if section not in sections} == {}


def test_code_names_the_document_of_each_section_it_cites():
    """A bare '§3' in code or tests is ambiguous (which document?): it is always 'docs/BEHAVIOUR.md §3'."""
    code = [line for line in _lines(re.compile("§")) if line.split(":", 1)[0].endswith(".py")]
    assert [line for line in code if "§" in CITED_SECTION.sub("", line)] == []
