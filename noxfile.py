"""nox sessions for sparseset: ``nox`` runs tests and lint; ``nox -s NAME`` the rest.

Sessions run on the interpreter nox itself runs on (no ``python=`` pin), each
in its own virtualenv, so they need no Python version that is not installed.
"""

import os

import nox

nox.options.sessions = ["tests", "lint"]

LINT_PATHS = ["src", "tests", "asv_bench", "noxfile.py", "conftest.py"]
#: The site's Python files and the user guide, whose code ruff formats too
#: (docs/contract.md and docs/architecture.md keep their compact listings).
DOCS_LINT_PATHS = ["docs/conf.py", "docs/_ext", "docs/gallery", "docs/guide"]


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (extra pytest arguments after ``--``)."""
    session.install("-e", ".[test]")
    session.run("pytest", "-q", "-n", "2", *session.posargs)


@nox.session
def boundscheck(session: nox.Session) -> None:
    """The kernel, state-machine and algebra tests with bounds checks compiled in.

    ``NUMBA_BOUNDSCHECK=1`` turns an out-of-bounds access in any kernel into
    an ``IndexError``, so it fails a test instead of corrupting memory. numba
    keys its on-disk cache without that setting, so the run compiles into a
    cache directory of its own. The tests are those marked ``boundscheck``
    (listed in ``tests/conftest.py``).
    """
    session.install("-e", ".[test]")
    cache = os.path.join(session.create_tmp(), "numba-boundscheck-cache")
    session.run(
        "pytest",
        "-q",
        "-m",
        "boundscheck",
        "-n",
        "2",
        *session.posargs,
        env={"NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": cache},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff lint and format check, without rewriting anything."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", *LINT_PATHS, "docs")
    session.run("ruff", "format", "--check", *LINT_PATHS, *DOCS_LINT_PATHS)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy on the package (settings in pyproject.toml)."""
    # The package and every optional dependency are installed so mypy sees
    # their types (numpy, numba, pyarrow, dask...); mypy's version is pinned.
    session.install("-e", ".[test,lint]")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Quick asv run against this checkout, installed in the session.

    ``--python=same`` benchmarks the session's interpreter with the editable
    install instead of building every commit into asv's own environments, so
    it works on uncommitted changes; ``--quick`` times each benchmark once
    and saves nothing. For a recorded run over commits use ``asv run`` in
    asv_bench/ directly.
    """
    session.install("-e", ".[bench]")
    session.chdir("asv_bench")
    # Records this machine's description without prompting (CI has no tty).
    session.run("asv", "machine", "--yes")
    session.run("asv", "check", "--python=same")
    session.run(
        "asv",
        "run",
        "--quick",
        "--python=same",
        # Imports the suite once and forks per benchmark, instead of a new
        # interpreter importing numba for each.
        "--launch-method",
        "forkserver",
        "--show-stderr",
        *session.posargs,
    )


@nox.session
def bench_history(session: nox.Session) -> None:
    """The last N commits into asv's results, and its HTML dashboard.

    ``nox -s bench_history -- N [asv run arguments]``: each of HEAD's last N
    commits is checked out into a temporary worktree and timed by the
    current suite in this session's environment (``asv_bench/history.py``),
    then ``asv publish`` writes the dashboard to ``asv_bench/.asv/html``
    (``asv preview`` in ``asv_bench/`` serves it). ``--bench REGEX`` runs a
    subset. Results accumulate: a commit timed before is timed again.
    """
    session.install("-e", ".[bench]")
    if not session.posargs:
        session.error("say how many commits: nox -s bench_history -- N")
    session.run("python", "asv_bench/history.py", *session.posargs)


@nox.session
def bench_compare(session: nox.Session) -> None:
    """asv continuous between two refs: ``nox -s bench_compare -- BASE HEAD``.

    Builds each ref into asv's own environment, runs the suite on both and
    prints the benchmarks that changed by more than 10% (asv's default
    factor); without arguments it compares ``main`` with ``HEAD``. Extra
    arguments after the two refs go to asv (``--bench world``,
    ``--factor 1.05``).
    """
    session.install("-e", ".[bench]")
    refs = session.posargs[:2] or ["main", "HEAD"]
    if len(refs) != 2:
        session.error("give two refs: nox -s bench_compare -- BASE HEAD")
    session.chdir("asv_bench")
    session.run("asv", "machine", "--yes")
    session.run("asv", "continuous", *refs, *session.posargs[2:])


@nox.session
def demo(session: nox.Session) -> None:
    """The particle demo, small by default (arguments after ``--`` replace them)."""
    session.install("-e", ".[demo]")
    arguments = session.posargs or ["--entities", "100000", "--steps", "50"]
    session.run("python", "-m", "sparseset", "demo", *arguments)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site into docs/_build/html, warnings as errors.

    Offline: no page fetches anything, and every internal link and reference
    must resolve (nitpicky). The gallery's examples and the performance
    page's chart run at build time, small; extra arguments after ``--`` go
    to sphinx-build (``-E`` to reread everything).
    """
    session.install("-e", ".[docs]")
    session.run(
        "sphinx-build",
        "-W",
        "--keep-going",
        "-b",
        "html",
        *session.posargs,
        "docs",
        "docs/_build/html",
    )
