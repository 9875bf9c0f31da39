"""The documentation site's sources against the code, without building it.

- every public name (the ``__all__`` of the package and of its public
  modules, plus the objects the World hands out) has an entry in the API
  reference under ``docs/reference/``: an ``autosummary`` line, a
  ``data`` directive, or an ``automodule`` with ``:members:``;
- every relative link of README.md and of the Markdown pages under
  ``docs/`` names a file that exists, and its ``#anchor``, if any, a
  heading of that page;
- nothing in the site's configuration fetches from the network.

The build itself (``nox -s docs``, ``sphinx-build -W``) checks the rest:
every cross-reference resolves, and every gallery example runs.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from test_docs import prose_lines, slug

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"

#: Modules whose ``__all__`` is public: each name needs a reference entry.
PUBLIC_MODULES = (
    "sparseset",
    "sparseset.sets",
    "sparseset.stores",
    "sparseset.world",
    "sparseset.schedule",
    "sparseset.jit",
    "sparseset.io",
    "sparseset.distributed",
    "sparseset.examples",
    "sparseset.demo",
    "sparseset.bench",
    "sparseset.cli",
    "sparseset.config",
)
#: Public classes outside any ``__all__``: what the World's methods return.
HANDED_OUT = (
    ("sparseset.world.commands", "Commands"),
    ("sparseset.world.tracking", "Reader"),
    ("sparseset.world.hooks", "Subscription"),
)


# -- reference coverage --------------------------------------------------------


def public_names() -> list[tuple[str, str]]:
    """``(module, name)`` for every public name."""
    names = [
        (module, name)
        for module in PUBLIC_MODULES
        for name in importlib.import_module(module).__all__
    ]
    return names + list(HANDED_OUT)


DIRECTIVE = re.compile(r"^\.\. (?:py:)?(\w+)::\s*(\S*)")


def reference_entries(text: str) -> set[str]:
    """The qualified names a reference page documents.

    Autosummary lines are read under the ``currentmodule`` in force (a
    leading ``~`` only shortens the displayed name); ``automodule`` with
    ``:members:`` documents the module's ``__all__``, as autodoc does.

    >>> sorted(reference_entries('''
    ... .. currentmodule:: pkg
    ...
    ... .. autosummary::
    ...    :toctree: generated
    ...
    ...    Thing
    ...    ~sub.helper
    ...
    ... .. data:: LIMIT
    ... '''))
    ['pkg.LIMIT', 'pkg.Thing', 'pkg.sub.helper']
    """
    entries: set[str] = set()
    module = ""
    in_summary = False
    whole_module = ""
    for line in text.splitlines():
        match = DIRECTIVE.match(line)
        if match:
            kind, target = match.groups()
            in_summary = kind == "autosummary"
            whole_module = ""
            if kind in ("currentmodule", "module"):
                module = target
            elif kind == "automodule":
                whole_module = target
            elif kind in ("data", "autodata", "class", "autoclass", "function"):
                entries.add(target if "." in target else f"{module}.{target}")
            elif kind in ("autofunction",):
                entries.add(f"{module}.{target}")
            continue
        stripped = line.strip()
        if whole_module and stripped == ":members:":
            exported = importlib.import_module(whole_module).__all__
            entries.update(f"{whole_module}.{name}" for name in exported)
        if in_summary and line.startswith("   ") and stripped:
            if not stripped.startswith(":"):
                entries.add(f"{module}.{stripped.lstrip('~')}")
        elif in_summary and stripped and not line.startswith(" "):
            in_summary = False
    return entries


def resolve(qualified: str) -> object:
    """The object a qualified name names (a module attribute, or deeper)."""
    parts = qualified.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            value = getattr(value, part)
        return value
    raise ImportError(qualified)


def missing_entries(
    public: Iterable[tuple[str, str]],
    documented: set[str],
    lookup=resolve,
) -> list[str]:
    """The public names with no reference entry.

    A name is covered by an entry of its own qualified name, or by an entry
    of the same name for the same object elsewhere (``sparseset.SparseSet``
    covers ``sparseset.sets.SparseSet``, its re-export).

    >>> things = {"pkg.A": "a", "pkg.sub.A": "a", "pkg.B": "b"}
    >>> missing_entries([("pkg", "A"), ("pkg.sub", "A"), ("pkg", "B")],
    ...                 {"pkg.A"}, things.__getitem__)
    ['pkg.B']
    """
    by_name: dict[str, list[object]] = {}
    for entry in documented:
        try:
            by_name.setdefault(entry.rpartition(".")[2], []).append(lookup(entry))
        except (ImportError, AttributeError, KeyError):
            continue
    missing = []
    for module, name in public:
        qualified = f"{module}.{name}"
        if qualified in documented:
            continue
        target = lookup(qualified)
        if not any(target is seen for seen in by_name.get(name, [])):
            missing.append(qualified)
    return missing


def documented_names() -> set[str]:
    entries: set[str] = set()
    for page in sorted(REFERENCE.glob("*.rst")):
        entries |= reference_entries(page.read_text())
    return entries


def test_the_reference_has_pages():
    assert len(list(REFERENCE.glob("*.rst"))) > 1


def test_the_coverage_check_catches_a_missing_name():
    # The check itself, on a fake package: a public name left out of the
    # reference is reported, a re-export of a documented object is not.
    fake = {"fake.Set": set, "fake.inner.Set": set, "fake.Map": dict}
    public = [("fake", "Set"), ("fake.inner", "Set"), ("fake", "Map")]
    assert missing_entries(public, {"fake.Set"}, fake.__getitem__) == ["fake.Map"]
    assert missing_entries(public, {"fake.Set", "fake.Map"}, fake.__getitem__) == []
    assert missing_entries(public, set(), fake.__getitem__) == [
        "fake.Set",
        "fake.inner.Set",
        "fake.Map",
    ]


def test_every_public_name_has_a_reference_entry():
    pytest.importorskip("distributed")
    missing = missing_entries(public_names(), documented_names())
    assert missing == [], (
        f"public names with no entry in docs/reference/*.rst: {missing}; add "
        "each to an autosummary list (or a data directive) there"
    )


def test_every_reference_entry_names_something():
    pytest.importorskip("distributed")
    stale = []
    for entry in sorted(documented_names()):
        try:
            resolve(entry)
        except (ImportError, AttributeError):
            stale.append(entry)
    assert stale == [], f"reference entries naming nothing: {stale}"


# -- links ---------------------------------------------------------------------

MARKDOWN = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
MARKDOWN = [page for page in MARKDOWN if "_build" not in page.parts]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
#: Pages the site generates at build time, and the sources they come from.
GENERATED = {"auto_gallery": "gallery"}


def relative_links(text: str) -> list[str]:
    """The link targets of a Markdown text outside code, external ones left out.

    >>> relative_links("[a](x.md#top) and [b](https://example.org) `[c](y.md)`")
    ['x.md#top']
    """
    found = []
    for line in prose_lines(text):
        line = re.sub(r"`[^`]*`", "", line)
        for target in LINK.findall(line):
            if not re.match(r"[a-z]+:", target):
                found.append(target)
    return found


def page_anchors(page: Path) -> set[str]:
    return {
        slug(line.lstrip("#"))
        for line in prose_lines(page.read_text())
        if re.match(r"#{1,6} ", line)
    }


def broken_link(page: Path, target: str) -> str | None:
    """Why ``target``, linked from ``page``, does not resolve; None if it does."""
    path, _, anchor = target.partition("#")
    if path:
        where = (page.parent / path).resolve()
        parts = where.relative_to(ROOT).parts if where.is_relative_to(ROOT) else ()
        if parts[:2] and parts[0] == "docs" and parts[1] in GENERATED:
            # sphinx-gallery writes index.rst from README.txt, and X.rst
            # from the script X.py.
            source = DOCS / GENERATED[parts[1]] / Path(*parts[2:])
            if source.name == "index.rst":
                source = source.with_name("README.txt")
            elif source.suffix == ".rst":
                source = source.with_suffix(".py")
            where = source
        if not where.exists():
            return f"{target}: no such file"
    else:
        where = page
    if anchor and where.suffix == ".md" and anchor not in page_anchors(where):
        return f"{target}: no heading with the anchor #{anchor}"
    return None


def test_the_link_check_catches_broken_links(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## A section\n")
    assert broken_link(page, "page.md#a-section") is None
    assert broken_link(page, "#top") is None
    assert "no heading" in broken_link(page, "#nowhere")
    assert broken_link(page, "gone.md") == "gone.md: no such file"


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = [
        reason
        for target in relative_links(page.read_text())
        if (reason := broken_link(page, target))
    ]
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


def test_the_readme_links_into_the_site():
    targets = relative_links((ROOT / "README.md").read_text())
    assert {"docs/guide/index.md", "docs/performance.md"} <= set(targets)


# -- offline -------------------------------------------------------------------


def test_the_site_fetches_nothing():
    conf = (DOCS / "conf.py").read_text()
    assert "sphinx.ext.intersphinx" not in conf
    assert "intersphinx_mapping" not in conf
    assert "linkcheck" not in conf
