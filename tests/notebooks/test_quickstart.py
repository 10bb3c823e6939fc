"""The stored quickstart notebook executes cleanly (nbclient) and matches its builder."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def test_quickstart_executes(tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    assert all(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "stored without outputs"
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def test_stored_notebook_is_the_built_one() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_quickstart", NOTEBOOKS / "build_quickstart.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stored = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    assert [c.source for c in stored.cells] == [c.source for c in module.build().cells]
