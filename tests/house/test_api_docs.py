"""docs/api.md is executable: every ```python block runs, in order, in one namespace."""

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_api_doc_examples_run(tmp_path, monkeypatch):
    # the examples' tempfile.mkdtemp() under the test's own folder (it left one in /tmp a run)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    ns: dict = {}
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            for b in blocks:
                exec(compile(b, "docs/api.md", "exec"), ns)
    finally:
        os.chdir(cwd)
    printed = out.getvalue()
    assert "H100" in printed
    assert "no such file" in printed
    assert ns["report"].has_gpu and ns["mi300"].spec.key == "mi300x"
    assert ns["out"].parent == tmp_path
