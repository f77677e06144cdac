"""Runs each python code block of docs/python.md in a child python: a block
that starts with `# needs: torch` only where PyTorch is installed, one with
`# needs: rigd` against a rigd this test starts."""

import importlib.util
import re

import pytest

from conftest import ROOT, run_python

GUIDE = ROOT / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)


def needs(code):
    first = code.splitlines()[0]
    return first.split(":", 1)[1].strip() if first.startswith("# needs:") else None


def test_the_guide_has_examples():
    assert len(BLOCKS) >= 7, "docs/python.md lost its examples"


@pytest.mark.parametrize("code", BLOCKS, ids=["block%d" % i for i in range(len(BLOCKS))])
def test_a_guide_example_runs(code, request):
    env = {}
    need = needs(code)
    if need == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed")
    if need == "rigd":
        env["RIG_SERVICE"] = request.getfixturevalue("rigd").socket
    child = run_python(code, timeout=120, **env)
    assert child.returncode == 0, "the example failed:\n%s\n%s" % (code, child.stderr)
