"""House rule: every perfreport module is at most 400 lines (split a file by concern before it grows past)."""

from __future__ import annotations

from pathlib import Path

import perfreport

LIMIT = 400
PKG = Path(perfreport.__file__).parent


def long_files(root: Path, limit: int = LIMIT) -> dict[str, int]:
    out = {}
    for p in sorted(root.rglob("*.py")):
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out[str(p.relative_to(root))] = n
    return out


def test_no_perfreport_file_exceeds_400_lines():
    assert long_files(PKG) == {}, f"split these by concern (<= {LIMIT} lines each)"


def test_the_check_sees_a_long_file(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert long_files(tmp_path) == {"long.py": LIMIT + 1}
