"""The README's Python examples run, in order, as one program (so they stay true)."""

import pathlib
import re


README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks()) >= 3


def test_readme_examples_run(tmp_path, monkeypatch, capsys):
    # loop programs read their source: write the examples to a file and run it as a module
    script = tmp_path / "readme_examples.py"
    script.write_text("\n\n".join(python_blocks()))
    monkeypatch.chdir(tmp_path)
    import runpy

    runpy.run_path(str(script), run_name="readme_examples")
    out = capsys.readouterr().out
    assert "Tensor(A, csr:" in out
    assert "lattice ['parse', 'concretize'" in out and "looplets ['parse'" in out


def test_readme_names_the_two_commands():
    text = README.read_text()
    assert "./dev lab" in text and "./dev test" in text
    assert "./dev test" in (README.parent / ".ci" / "run").read_text().replace("./dev test -q", "./dev test")
