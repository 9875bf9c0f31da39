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


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, namespace):
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), namespace)
