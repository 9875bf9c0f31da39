"""The docs in ``docs/`` against the code, where that can be checked mechanically.

- every anchor of ``docs/contract.md`` or ``docs/architecture.md`` that
  ``tests/`` and ``src/`` cite (``docs/<page>.md#<anchor>``, or the
  page and a heading in quotes), and every ``(#<anchor>)`` or
  ``(<page>.md#<anchor>)`` link between the pages, names a heading
  that exists, and no page has two headings with the same anchor;
- architecture.md's module tree lists exactly the modules under
  ``src/sparseset``, each with a line saying what it is;
- architecture.md's layer table is ``tests/test_layers.py``'s ``LAYERS``.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from test_layers import LAYERS

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PACKAGE = ROOT / "src" / "sparseset"
PAGES = ("contract.md", "architecture.md")


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading.

    >>> slug("Where we differ from the original design")
    'where-we-differ-from-the-original-design'
    >>> slug("s.jit.add(i) in @njit")
    'sjitaddi-in-njit'
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown page outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def headings(page: str) -> list[str]:
    text = (DOCS / page).read_text()
    return [
        line.lstrip("#").strip()
        for line in prose_lines(text)
        if re.match(r"#{1,6} ", line)
    ]


def anchors(page: str) -> set[str]:
    return {slug(h) for h in headings(page)}


def block_after(page: str, heading: str) -> list[str]:
    """The lines of the first fenced block in section ``heading`` of ``page``."""
    lines = (DOCS / page).read_text().splitlines()
    start = lines.index(f"## {heading}")
    opening = next(
        k for k in range(start + 1, len(lines)) if lines[k].startswith("```")
    )
    closing = next(
        k for k in range(opening + 1, len(lines)) if lines[k].startswith("```")
    )
    return lines[opening + 1 : closing]


def sources() -> list[pathlib.Path]:
    return sorted((ROOT / "tests").rglob("*.py")) + sorted(PACKAGE.rglob("*.py"))


CITATION = re.compile(r"docs/(contract|architecture)\.md#([\w\-]+)")
#: A citation by heading text: ``docs/architecture.md, "Who may ask what"``.
QUOTED = re.compile(r'docs/(contract|architecture)\.md,?\s+"([^"]+)"')
LINK = re.compile(r"\]\(((?:contract|architecture)\.md)?#([\w\-]+)\)")


def citations() -> list[tuple[str, str, str]]:
    """``(where, page, anchor)`` for every anchor the sources and the docs cite."""
    found = []
    for path in sources():
        where = str(path.relative_to(ROOT))
        text = path.read_text()
        for match in CITATION.finditer(text):
            found.append((where, f"{match[1]}.md", match[2]))
        for match in QUOTED.finditer(text):
            found.append((where, f"{match[1]}.md", slug(match[2])))
    for page in (*PAGES, "README.md"):
        for match in LINK.finditer((DOCS / page).read_text()):
            found.append((f"docs/{page}", match[1] or page, match[2]))
    return found


def test_the_sources_cite_the_docs():
    # The citations below are what the other tests check; there must be some.
    cited = {page for _, page, _ in citations()}
    assert cited == set(PAGES)


@pytest.mark.parametrize(
    ("where", "page", "anchor"), sorted(set(citations())), ids=lambda v: str(v)
)
def test_cited_anchor_exists(where, page, anchor):
    assert anchor in anchors(page), (
        f"{where} cites docs/{page}#{anchor}, which is not a heading of {page}"
    )


@pytest.mark.parametrize("page", PAGES)
def test_anchors_are_unique(page):
    seen = [slug(h) for h in headings(page)]
    repeated = sorted({a for a in seen if seen.count(a) > 1})
    assert repeated == [], f"{page} has two headings with the anchor(s) {repeated}"


def module_tree() -> dict[str, str]:
    """architecture.md's module tree: path under src/sparseset -> its line."""
    lines = block_after("architecture.md", "The module tree")
    assert lines[0].strip() == "src/sparseset/"
    entries: dict[str, str] = {}
    folders: list[tuple[int, str]] = []
    for line in lines[1:]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        name, _, text = line.strip().partition(" ")
        while folders and folders[-1][0] >= indent:
            folders.pop()
        path = "/".join([f for _, f in folders] + [name.rstrip("/")])
        entries[path + ("/" if name.endswith("/") else "")] = text.strip()
        if name.endswith("/"):
            folders.append((indent, name.rstrip("/")))
    return entries


def test_module_tree_lists_every_module():
    tree = module_tree()
    named = {path for path in tree if path.endswith(".py")}
    actual = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert sorted(actual - named) == [], "modules missing from the tree"
    assert sorted(named - actual) == [], "the tree names modules that are gone"
    folders = {path.rstrip("/") for path in tree if path.endswith("/")}
    assert all((PACKAGE / folder).is_dir() for folder in folders)


def test_module_tree_says_what_each_module_is():
    blank = [path for path, text in module_tree().items() if not text]
    assert blank == []


def layer_table() -> list[set[str]]:
    """architecture.md's layer table, bottom layer first."""
    rows: dict[int, set[str]] = {}
    for line in block_after("architecture.md", "Layers"):
        match = re.match(r"\s*(\d+)\s+(.+?)\s{2,}\S", line)
        if match:
            units = {unit.strip() for unit in match[2].split(",")}
            rows[int(match[1])] = units
    assert sorted(rows) == list(range(len(rows))), "layers must be numbered 0..n"
    return [rows[rank] for rank in range(len(rows))]


def test_layer_table_is_test_layers():
    assert layer_table() == LAYERS
