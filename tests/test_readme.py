"""Every ```python block in README.md runs, in order, in one namespace, and
every command of its ```bash blocks names a real CLI option, nox session,
extra, asv command or directory.

So the examples a newcomer copies cannot drift from the code. (The shell
commands themselves run in CI: ``.ci/run`` installs, tests and runs the demo.)
"""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert BLOCKS, "README.md lost its python examples"


@pytest.fixture(scope="module")
def namespace():
    # A script's namespace has a __name__: without one, numba takes the
    # blocks' functions for generated code and pickles their globals (every
    # object the README made, a world's lock included) into its cache.
    return {"__name__": "__main__"}


@pytest.fixture(scope="module")
def block_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, namespace, block_dir):
    # Each block runs from a real file, as a user's script would, so that
    # numba's cache=True has a source file to key its cache on.
    path = block_dir / f"readme_block_{index}.py"
    path.write_text(BLOCKS[index])
    exec(compile(BLOCKS[index], str(path), "exec"), namespace)


# -- shell blocks: every command a reader can copy refers to something real --

SHELL_BLOCKS = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
ROOT = README.parent
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


def test_readme_shell_commands_are_known():
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
            named = [w for w in words[words.index("-s") + 1 :] if not w.startswith("-")]
            named = named[: named.index("--")] if "--" in named else named
            assert named and set(named) <= sessions, command
            seen.add("nox")
        elif words[0] == "asv":
            assert words[1] in ASV_COMMANDS, command
        elif words[0] == "cd":
            assert (ROOT / words[1]).is_dir(), command
    assert {"cli", "nox"} <= seen
