"""Every ```python block in README.md runs, in order, in one namespace.

So the examples a newcomer copies cannot drift from the code.
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
    return {}


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
