"""Sphinx configuration of the sparseset documentation site.

Built by ``nox -s docs`` and by ``.ci/run`` with warnings as errors. Nothing
here fetches from the network: no intersphinx, no theme icons or analytics
loaded from elsewhere, no link checker against live servers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sphinx.application import Sphinx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import sparseset  # noqa: E402

project = "sparseset"
author = "sparseset developers"
copyright = "sparseset developers"
release = version = sparseset.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "cli_reference",
    "bench_plot",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/README.md is the folder's note for readers of the repository; the
# site's front page is index.md.
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "README.md", "gallery/README.txt"]

# -- links: every internal reference must resolve -----------------------------
nitpicky = True
# Types of other libraries named in signatures and docstrings: no
# intersphinx inventory is fetched, so they cannot resolve (on purpose).
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(numpy|np|numba|pandas|pd|pyarrow|pa|polars|dask|distributed|"
        r"matplotlib|collections|typing|os|io|argparse|threading|contextlib)\b.*",
    ),
    # The implementation's own modules, which docstrings name to say where
    # something is done; docs/architecture.md maps them, the reference
    # covers the public names only.
    (
        r"py:.*",
        r"sparseset\.(kernels|sets\.(locking|pool|engine|index_kinds)|"
        r"jit\.(proxy|commands|twins|types)|world\.(hooks|tracking)$|"
        r"distributed\.collection)\b.*",
    ),
    # The bench's own inputs and tables, named in its docstrings.
    (
        r"py:(data|func|attr)",
        r"(SPARSESET|PYTHON_CAP|STREAMS|SCHEMA|ESPER_WORLD|rng|half|"
        r"sparseset\.bench\.(workloads|data)\..*)",
    ),
]
myst_heading_anchors = 4
myst_all_links_external = False
myst_enable_extensions = ["colon_fence"]

# -- API reference -------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
# A method that overrides another without a docstring of its own shows
# none, rather than the parent's (collections.abc's are not numpydoc).
autodoc_inherit_docstrings = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_show_inherited_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()


def _skip_foreign(
    app: Sphinx, what: str, name: str, obj: object, skip: bool, options: object
) -> bool | None:
    # A container that takes collections.abc's mixin methods as they are
    # (SparseMap's keys, pop, setdefault) says so in its docstring; those
    # methods' own docstrings are Python's, not numpydoc.
    if getattr(obj, "__module__", None) == "collections.abc":
        return True
    return None


def setup(app: Sphinx) -> None:
    app.connect("autodoc-skip-member", _skip_foreign)


# -- gallery -------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["gallery"],
    "gallery_dirs": ["auto_gallery"],
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "reset_modules": ("matplotlib", "gallery_timing.time_examples"),
    "reset_modules_order": "both",
    "download_all_examples": False,
    "remove_config_comments": True,
    "backreferences_dir": None,
    "show_memory": False,
    "show_signature": False,
    "min_reported_time": 1,
}

# -- HTML ----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sparseset {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "icon_links": [],
    "check_switcher": False,
    "header_links_before_dropdown": 7,
}
html_show_sourcelink = False
html_copy_source = False
