"""The documentation site's sources against the code, without building it.

- every public name (the ``__all__`` of the package and of its public
  modules, plus the objects the World hands out) has an entry in the API
  reference under ``docs/reference/``: an ``autosummary`` line, a
  ``data`` directive, or an ``automodule`` with ``:members:``;
- every public function, and every public method and property of a public
  class, states its complexity (``O(...)``) in its docstring, and one
  whose own code raises has a Raises section naming what it raises
  (:func:`undocumented_costs` has the rule and what it leaves to review);
- every relative link of README.md and of the Markdown pages under
  ``docs/`` names a file that exists, and its ``#anchor``, if any, a
  heading of that page;
- nothing in the site's configuration fetches from the network.

The build itself (``nox -s docs``, ``sphinx-build -W``) checks the rest:
every cross-reference resolves, and every gallery example runs.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable
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
    "sparseset.recording",
    "sparseset.jit",
    "sparseset.io",
    "sparseset.distributed",
    "sparseset.examples",
    "sparseset.demo",
    "sparseset.models",
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


# -- complexity and errors ---------------------------------------------------

#: Where a Raises section starts in a docstring (numpydoc's underlined heading).
RAISES = re.compile(r"^Raises\n-{6,}$", re.MULTILINE)
#: A numpydoc section heading: what ends the Raises section.
SECTION = re.compile(r"^\w[\w ]*\n-{3,}$", re.MULTILINE)


def documented_members(
    public: Iterable[tuple[str, object]], package: str = "sparseset"
) -> list[tuple[str, Callable[..., object]]]:
    """``(qualified name, function)`` for every public callable to document.

    The public functions, and the public methods and properties (plain,
    cached, static, class) of the public classes, those the class defines
    and those it inherits from classes of ``package``; a property stands
    for its getter. Data (dataclass and named-tuple fields, slots,
    constants) and names starting with ``_`` are left out, and so are
    exception classes, whose only methods are Python's, and the mixin
    methods a class takes as they are (``SparseMap.get`` from
    ``collections.abc``, under a lock): the reference leaves those out too
    (``docs/conf.py``).

    >>> class Base:
    ...     def shared(self): ...
    >>> Base.__module__ = "pkg.base"
    >>> class Thing(Base):
    ...     limit = 3
    ...     @property
    ...     def size(self): ...
    ...     def _hidden(self): ...
    >>> Thing.__module__ = "pkg.thing"
    >>> def helper(): ...
    >>> [name for name, _ in documented_members(
    ...     [("pkg.Thing", Thing), ("pkg.helper", helper)], package="pkg")]
    ['pkg.Thing.size', 'pkg.Thing.shared', 'pkg.helper']
    """
    found: dict[str, Callable[..., object]] = {}
    for qualified, obj in public:
        if isinstance(obj, type):
            if issubclass(obj, BaseException):
                continue
            for klass in obj.__mro__:
                if not klass.__module__.startswith(package):
                    continue
                for name, value in vars(klass).items():
                    function = _function_of(value)
                    member = f"{qualified}.{name}"
                    if name.startswith("_") or function is None or member in found:
                        continue
                    code = inspect.unwrap(function)
                    if code is not function and not code.__module__.startswith(package):
                        continue  # a mixin's method, wrapped: not in the reference
                    found[member] = function
        elif callable(obj):
            found[qualified] = obj
    return list(found.items())


def _function_of(value: object) -> Callable[..., object] | None:
    """The function a class attribute runs, or None for data."""
    if isinstance(value, property):
        return value.fget
    if isinstance(value, functools.cached_property):
        return value.func
    if isinstance(value, (staticmethod, classmethod)):
        return value.__func__
    if inspect.isfunction(value):
        return value
    return None


def raised_names(function: Callable[..., object]) -> list[str]:
    """The exceptions ``function``'s own body raises, by the name it raises.

    Only ``raise`` statements of the function itself count (not those of
    the functions it calls, nor of functions it defines); a bare ``raise``
    re-raises what something else raised and does not count. The name is
    the class's (``raise KeyError(k)`` and ``raise KeyError`` give
    ``KeyError``), or the name of the value raised (``raise error``).

    >>> def check(k):
    ...     if k < 0:
    ...         raise ValueError(f"{k} < 0")
    ...     try:
    ...         return {}[k]
    ...     except KeyError:
    ...         raise
    >>> raised_names(check)
    ['ValueError']
    """
    # The code itself: a numba dispatcher's Python function, and under a
    # wrapper (sparseset.sets.locking's guards) the function it wraps.
    function = inspect.unwrap(getattr(function, "py_func", function))
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return []
    tree = ast.parse(source).body[0]
    names = []
    pending = list(ast.iter_child_nodes(tree))
    while pending:
        node = pending.pop(0)
        if isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        ):
            continue
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name):
                names.append(raised.id)
            elif isinstance(raised, ast.Attribute):
                names.append(raised.attr)
        pending.extend(ast.iter_child_nodes(node))
    return names


def raises_section(doc: str) -> str | None:
    r"""The text of a numpydoc docstring's Raises section, None if it has none.

    >>> raises_section("Do it.\n\nRaises\n------\nKeyError\n    If not there.")
    'KeyError\n    If not there.'
    >>> raises_section("Do it.") is None
    True
    """
    match = RAISES.search(doc)
    if match is None:
        return None
    rest = doc[match.end() :]
    following = SECTION.search(rest)
    return (rest[: following.start()] if following else rest).strip()


def undocumented_costs(
    members: Iterable[tuple[str, Callable[..., object]]],
) -> list[str]:
    """What each member's docstring fails of the rule, one line per failure.

    The rule (the API reference's promise, issue 29):

    - **complexity**: the docstring states the cost in big-O notation, so
      it contains ``O(`` (``O(1)``, ``O(k) for k ids``, ``O(n) in the
      members``), with the sentence around it saying in what;
    - **errors**: a callable whose own body has a ``raise`` statement has
      a Raises section, which names every exception class it raises (a
      raise of a value, ``raise error``, needs the section only).

    What the functions it calls raise is not checked: that cannot be read
    off the code reliably, so "everything that can raise says so" is left
    to review, and a Raises section is the reviewer's statement of what
    the call raises, its callees' errors included.

    >>> def fine(k):
    ...     '''Look k up, O(1).
    ...
    ...     Raises
    ...     ------
    ...     KeyError
    ...         If k is not there.
    ...     '''
    ...     raise KeyError(k)
    >>> undocumented_costs([("fine", fine)])
    []
    """
    failures = []
    for name, function in members:
        doc = inspect.getdoc(function) or ""
        if "O(" not in doc:
            failures.append(f"{name}: no complexity (O(...)) in its docstring")
        raised = raised_names(function)
        if not raised:
            continue
        section = raises_section(doc)
        if section is None:
            raised = list(dict.fromkeys(raised))
            failures.append(f"{name}: raises {raised} but has no Raises section")
            continue
        unnamed = sorted(
            {
                error
                for error in raised
                if error[:1].isupper() and not re.search(rf"\b{error}\b", section)
            }
        )
        if unnamed:
            failures.append(f"{name}: its Raises section does not name {unnamed}")
    return failures


def test_the_cost_check_catches_a_missing_line():
    # The check itself, on a fake class: a method and a property with no
    # complexity, a method that raises with no Raises section, and one
    # whose section leaves an exception out, are each reported; the
    # documented method is not.
    class Fake:
        def documented(self, k: int) -> int:
            """Twice k, O(1).

            Raises
            ------
            ValueError
                If k is negative.
            """
            if k < 0:
                raise ValueError(k)
            return 2 * k

        def no_cost(self) -> None:
            """Nothing."""

        @property
        def size(self) -> int:
            """The size."""
            return 0

        def silent(self, k: int) -> None:
            """O(1)."""
            if k:
                raise KeyError(k)

        def partial(self, k: int) -> None:
            """O(1).

            Raises
            ------
            KeyError
                If k is set.
            """
            if k:
                raise KeyError(k)
            raise TypeError(k)

    Fake.__module__ = "fake"
    members = documented_members([("fake.Fake", Fake)], package="fake")
    assert [name for name, _ in members] == [
        "fake.Fake.documented",
        "fake.Fake.no_cost",
        "fake.Fake.size",
        "fake.Fake.silent",
        "fake.Fake.partial",
    ]
    assert undocumented_costs(members) == [
        "fake.Fake.no_cost: no complexity (O(...)) in its docstring",
        "fake.Fake.size: no complexity (O(...)) in its docstring",
        "fake.Fake.silent: raises ['KeyError'] but has no Raises section",
        "fake.Fake.partial: its Raises section does not name ['TypeError']",
    ]


def public_objects() -> list[tuple[str, object]]:
    """Each public object once, under its first public name."""
    objects: list[tuple[str, object]] = []
    for module, name in public_names():
        obj = resolve(f"{module}.{name}")
        if not any(obj is seen for _, seen in objects):
            objects.append((f"{module}.{name}", obj))
    return objects


def test_every_public_callable_states_its_cost_and_errors():
    pytest.importorskip("distributed")
    failures = undocumented_costs(documented_members(public_objects()))
    assert failures == [], (
        f"{len(failures)} failures of the docstring rule of undocumented_costs:\n"
        + "\n".join(failures)
    )


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
