"""House rule: tests/ mirrors perfreport/ file by file.

Every module ``perfreport/<dir>/<m>.py`` (``__init__`` and ``__main__`` aside) has its own test file
``tests/<dir>/test_<m>.py`` (a module at perfreport's root, ``perfreport/<m>.py``: ``tests/core/test_<m>.py``,
so that the tests/ root holds no test file) -- or an entry in :data:`NO_MIRROR` naming the existing test files that
exercise it and why it has none of its own. The table only shrinks: an entry whose module has gained its
mirror file, whose module is gone, or whose test files are gone fails, so does a new module with
neither. To add a module, add its test file beside the others of its stage.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# module (relative to perfreport/) -> (test files, relative to the repository root, that exercise it; why none of its own)
NO_MIRROR: dict[str, tuple[tuple[str, ...], str]] = {
    "pa/kernel/reduce_kernel.py": (
        ("tests/pa/kernel/test_partition_kernel.py",),
        "the split-K reduce Triton kernel: only callable through the launch, run under TRITON_INTERPRET=1 there",
    ),
}


def modules(pkg: Path) -> list[str]:
    """Every module of ``pkg`` but ``__init__`` and ``__main__``, relative to it."""
    return sorted(str(p.relative_to(pkg)) for p in pkg.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))


def mirror(rel: str) -> str:
    """``read/heap.py`` -> ``tests/read/test_heap.py``; ``events.py`` -> ``tests/core/test_events.py``."""
    p = Path(rel)
    return str(Path("tests") / (p.parent if p.parent != Path(".") else "core") / f"test_{p.name}")


def problems(root: Path, table: dict) -> list[str]:
    """One line per module with neither a mirror test file nor a table entry, and per stale entry."""
    mods = modules(root / "perfreport")
    out = []
    for m in mods:
        has = (root / mirror(m)).is_file()
        if not has and m not in table:
            out.append(f"{m}: no {mirror(m)} (write it) and no NO_MIRROR entry")
        if has and m in table:
            out.append(f"{m}: has {mirror(m)} now: remove its NO_MIRROR entry")
    for m, (files, why) in table.items():
        if m not in mods:
            out.append(f"{m}: no such module: remove its NO_MIRROR entry")
        if not files or not why:
            out.append(f"{m}: a NO_MIRROR entry names the test files that exercise the module and why")
        out += [f"{m}: NO_MIRROR names {f}, which does not exist" for f in files if not (root / f).is_file()]
    return out


def clashing_test_names(tests: Path) -> dict[str, list[str]]:
    """Test files pytest would import under one module name: the same basename in folders that are
    not packages (a mirror such as tree/steps.py and tables/steps.py needs one of them to be)."""
    seen: dict[str, list[str]] = {}
    for p in sorted(tests.rglob("test_*.py")):
        if not (p.parent / "__init__.py").exists():
            seen.setdefault(p.name, []).append(str(p.relative_to(tests)))
    return {k: v for k, v in seen.items() if len(v) > 1}


def test_every_module_has_its_mirror_test_file_or_a_reason():
    assert problems(ROOT, NO_MIRROR) == []


def test_test_module_names_do_not_clash():
    assert clashing_test_names(ROOT / "tests") == {}, "add an __init__.py to one of the folders"


def test_the_clash_check_sees_two_steps_tests(tmp_path):
    for d in ("tree", "tables", "read"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "test_steps.py").write_text("")
    assert clashing_test_names(tmp_path) == {
        "test_steps.py": ["read/test_steps.py", "tables/test_steps.py", "tree/test_steps.py"]
    }
    (tmp_path / "tables" / "__init__.py").write_text("")
    (tmp_path / "read" / "__init__.py").write_text("")
    assert clashing_test_names(tmp_path) == {}


def _house(tmp_path: Path) -> Path:
    for f in (
        "perfreport/__init__.py",
        "perfreport/read/__init__.py",
        "perfreport/read/heap.py",
        "perfreport/events.py",
    ):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    for f in ("tests/read/test_heap.py", "tests/core/test_events.py", "tests/cli/test_help.py"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("")
    return tmp_path


def test_mirror_names():
    assert mirror("read/heap.py") == "tests/read/test_heap.py"
    assert mirror("pa/bench/backends/vllm_backend.py") == "tests/pa/bench/backends/test_vllm_backend.py"
    assert mirror("events.py") == "tests/core/test_events.py"


def test_the_check_passes_a_mirrored_house(tmp_path):
    assert problems(_house(tmp_path), {}) == []


def test_the_check_finds_a_new_module_with_neither(tmp_path):
    root = _house(tmp_path)
    (root / "perfreport/read/new.py").write_text("")
    assert problems(root, {}) == ["read/new.py: no tests/read/test_new.py (write it) and no NO_MIRROR entry"]
    assert problems(root, {"read/new.py": (("tests/cli/test_help.py",), "CLI only")}) == []


def test_the_check_finds_stale_entries(tmp_path):
    root = _house(tmp_path)
    table = {
        "read/heap.py": (("tests/cli/test_help.py",), "why"),  # has its mirror now
        "read/gone.py": (("tests/cli/test_help.py",), "why"),  # no such module
        "events.py": (("tests/cli/test_gone.py",), "why"),  # names a missing test file
    }
    assert problems(root, table) == [
        "events.py: has tests/core/test_events.py now: remove its NO_MIRROR entry",
        "read/heap.py: has tests/read/test_heap.py now: remove its NO_MIRROR entry",
        "read/gone.py: no such module: remove its NO_MIRROR entry",
        "events.py: NO_MIRROR names tests/cli/test_gone.py, which does not exist",
    ]


def test_the_tests_root_holds_no_test_file():
    """Tests mirror the source: a module at perfreport's root is tested in tests/core/, never at tests/."""
    assert sorted(p.name for p in (ROOT / "tests").glob("test_*.py")) == []
