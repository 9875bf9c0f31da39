"""Every ```python block in README.md and in each user-guide page
(``docs/guide/*.md``) runs, in order, in one namespace per page, and every
command of their ```bash blocks names a real CLI option, nox session,
extra, asv command or directory.

So the examples a newcomer copies cannot drift from the code. (The shell
commands themselves run in CI: ``.ci/run`` installs, tests and runs the demo.)
"""

import hashlib
import os
import re
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))
#: Guide pages that only link to the others.
GUIDE_WITHOUT_CODE = {"index.md"}


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a Markdown page, in order."""
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)


def block_file(page: Path, index: int, code: str) -> Path:
    """A file holding ``code``, named after its page, block and content.

    Each block runs from a real file, as a user's script would, so that
    numba's cache=True has a source file to key its cache on. The name
    carries the code's hash and the file is never rewritten: numba keys
    its cache on the file's path and time stamp, so an unchanged block
    loads its functions from the cache on the next run instead of
    compiling them again, and a changed one gets a file of its own.
    """
    folder = Path(tempfile.gettempdir()) / "sparseset-doc-blocks"
    folder.mkdir(exist_ok=True)
    digest = hashlib.sha256(code.encode()).hexdigest()[:12]
    path = folder / f"{page.stem}_{index}_{digest}.py"
    if not path.exists():
        # Written aside and renamed: another test process may read it.
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(code)
        partial.replace(path)
    return path


def run_block(page: Path, index: int, code: str, namespace: dict) -> None:
    path = block_file(page, index, code)
    exec(compile(code, str(path), "exec"), namespace)


def script_namespace() -> dict:
    # A script's namespace has a __name__: without one, numba takes the
    # blocks' functions for generated code and pickles their globals (every
    # object the page made, a world's lock included) into its cache.
    return {"__name__": "__main__"}


BLOCKS = python_blocks(README)


def test_readme_has_examples():
    assert BLOCKS, "README.md lost its python examples"


@pytest.fixture(scope="module")
def namespace():
    return script_namespace()


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, namespace):
    run_block(README, index, BLOCKS[index], namespace)


def test_the_guide_has_pages():
    assert len(GUIDE) > len(GUIDE_WITHOUT_CODE)


@pytest.mark.parametrize("page", GUIDE, ids=lambda page: page.name)
def test_guide_page_runs(page):
    # One test per page, its blocks in order: a page is one script, and
    # its blocks must not be split between test processes.
    blocks = python_blocks(page)
    if page.name in GUIDE_WITHOUT_CODE:
        assert blocks == []
        return
    assert blocks, f"{page.name} has no python example"
    namespace = script_namespace()
    for index, code in enumerate(blocks):
        try:
            run_block(page, index, code, namespace)
        except Exception as error:
            error.add_note(f"in python block {index + 1} of docs/guide/{page.name}")
            raise


# -- shell blocks: every command a reader can copy refers to something real --

PAGES = [README, *GUIDE]
SHELL_BLOCKS = [
    block
    for page in PAGES
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S)
]
ASV_COMMANDS = {
    "machine",
    "run",
    "continuous",
    "publish",
    "preview",
    "check",
    "compare",
}


def shell_commands():
    """Each command of every ```bash block, split at ``&&`` and comments."""
    for block in SHELL_BLOCKS:
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            yield from filter(None, (part.strip() for part in line.split("&&")))


def test_shell_commands_are_known():
    import tomllib

    from sparseset.cli.commands import build_parser

    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]
    )
    sessions = set(
        re.findall(
            r"^def (\w+)\(session", (ROOT / "noxfile.py").read_text(), flags=re.M
        )
    )
    seen = set()
    for command in shell_commands():
        words = command.split()
        if command.startswith("python -m sparseset"):
            build_parser().parse_args(words[3:])  # exits (fails) on bad arguments
            seen.add("cli")
        elif command.startswith("pip install -e"):
            wanted = re.search(r'"\.\[([\w,]+)\]"', command).group(1).split(",")
            assert set(wanted) <= extras, command
        elif words[0] == "nox":
            # Sessions follow -s up to "--", after which come their arguments.
            sessions_part = words[words.index("-s") + 1 :]
            if "--" in sessions_part:
                sessions_part = sessions_part[: sessions_part.index("--")]
            named = [w for w in sessions_part if not w.startswith("-")]
            assert named and set(named) <= sessions, command
            seen.add("nox")
        elif words[0] == "asv":
            assert words[1] in ASV_COMMANDS, command
        elif words[0] == "cd":
            assert (ROOT / words[1]).is_dir(), command
    assert {"cli", "nox"} <= seen
