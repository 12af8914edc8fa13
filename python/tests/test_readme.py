"""The README's Python example runs as written."""

from __future__ import annotations

from conftest import ROOT


def python_blocks(section: str) -> list[str]:
    readme = (ROOT / "README.md").read_text()
    start = readme.index(f"\n## {section}\n")
    end = readme.find("\n## ", start + 1)
    text = readme[start:end]
    blocks = text.split("```python\n")[1:]
    return [block.split("```")[0] for block in blocks]


def test_the_python_section_example_runs(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    blocks = python_blocks("Python")
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {})
