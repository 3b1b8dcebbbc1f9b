"""The README's Python examples run as written (from the repository root)."""
import re

import pytest

from conftest import SOURCE_DIR


def readme_python_blocks():
    text = (SOURCE_DIR / "README.md").read_text()
    section = re.search(r"^## Python\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Python' section"
    return re.findall(r"```python\n(.*?)```", section.group(1), re.S)


@pytest.mark.parametrize("index", range(2))
def test_readme_example_runs(index, monkeypatch):
    blocks = readme_python_blocks()
    assert len(blocks) == 2, "the test expects the te example and the model example"
    monkeypatch.chdir(SOURCE_DIR)
    exec(compile(blocks[index], f"README.md python block {index}", "exec"), {})
