"""CLI conventions: -h, --version, a default shown for every option, choices listed, an
Examples block per command; archs fits 120 columns; --format tsv; --sheet prefix."""

from __future__ import annotations

from perfreport.specs import list_archs

import csv
import io
import re
import os

import pytest
from typer.testing import CliRunner

from perfreport import __version__
from perfreport.cli.app import app
from tests.cli.forked_cli import run
from tests.conftest import FIX

COMMANDS = ["analyze", "diff", "archs", "bench-pa"]
runner = CliRunner()


def help_text(*args) -> str:
    r = runner.invoke(app, [*args, "-h"], env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    return r.output


def options(text: str) -> list[tuple[str, str]]:
    """(option, its help text) from click's plain help, every section (the option panels:
    Outputs, Checks, ...): an entry starts at two spaces and a dash."""
    block = text.split("Examples:")[0]
    out, cur = [], None
    for line in block.splitlines():
        if line and not line.startswith(" "):  # a section title
            cur = None
            continue
        m = re.match(r"^  (-{1,2}[\w-]+(?:, --[\w-]+)?(?: / --[\w-]+)?)\s*(.*)$", line)
        if m:
            cur = [m.group(1), m.group(2)]
            out.append(cur)
        elif cur is not None:
            cur[1] += " " + line.strip()
    return [(a, b) for a, b in out]


def test_version():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"perfreport {__version__}"


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_option_says_its_default(cmd):
    text = help_text(cmd)
    opts = options(text)
    assert len(opts) >= 2
    for name, h in opts:
        if name.endswith("--help"):
            continue
        assert re.search(r"\[(default: [^\]]+|GPU: [^\]]+)\]", h), f"{cmd} {name}: no default in {h!r}"


@pytest.mark.parametrize("cmd", COMMANDS)
def test_examples_block(cmd):
    ex = [line for line in help_text(cmd).split("Examples:")[1].splitlines() if line.strip()]
    assert len(ex) >= 2
    assert all(line.startswith("    ") and "perfreport " in line for line in ex)  # one per line, as written


def test_defaults_in_brackets_survive():
    text = " ".join(help_text("analyze").split())
    assert "[default: <trace stem>_perf_report.xlsx beside the trace]" in text  # was eaten by rich markup
    assert "[default: only when stdout is a terminal]" in text
    assert "[GPU: 32; CPU: 2]" in " ".join(help_text("bench-pa").split())


def test_choices_listed():
    text = help_text("analyze")
    assert "--format csv|tsv|json|table" in text
    assert "--basis peak|achievable" in text
    assert "unified_perf_summary, gpu_timeline" in " ".join(text.split())


def test_bad_format_one_line():
    r = run("analyze", FIX / "cpu_block.json.gz", "--format", "xml", text=True)  # a process forked (forked_cli.py)
    assert r.returncode == 2
    assert r.stderr.strip() == "perfreport: --format must be one of csv, tsv, json, table, not 'xml'"


def test_tsv_splits_on_tabs_with_commas_in_cells():
    r = run("analyze", FIX / "h100_qwen_0.5b.json.gz", "--sheet", "unified", "--format", "tsv", "-q", text=True)
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout), delimiter="\t", quoting=csv.QUOTE_NONE))
    head = rows[0]
    assert head[0] == "name" and all(len(x) == len(head) for x in rows)
    dims = head.index("input dims")
    assert any(", " in x[dims] for x in rows[1:])  # commas inside a cell, split right


def test_archs_fits_120_columns():
    r = run("archs", text=True)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 120
    assert not any(len(line) > 120 for line in lines)  # not padded to 250 either
    # one row per GPU: H100 SXM's memory bandwidth, TF32 and BF16 peaks on its row
    row = next(line for line in lines if line.strip().startswith("h100_sxm "))
    assert "3.35" in row and "494.7" in row and "989.4" in row
    assert "1307.4" in next(line for line in lines if line.strip().startswith("mi300x "))
    assert any("NVIDIA H100 SXM5 80GB" in line for line in lines)


def test_format_table_never_folds_a_number():
    r = run(
        "analyze",
        FIX / "h100_qwen_0.5b.json.gz",
        "--sheet",
        "unified",
        "--format",
        "table",
        "-q",
        text=True,
        env={k: v for k, v in os.environ.items() if k != "COLUMNS"},
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(line) <= 200 for line in lines)  # a pipe without $COLUMNS: 200 columns
    rule = next(i for i, line in enumerate(lines) if set(line) == {"─"})
    body = lines[rule + 1 :]
    body = body[: next((i for i, line in enumerate(body) if line.startswith("not shown at ")), len(body))]
    csv_rows = run("analyze", FIX / "h100_qwen_0.5b.json.gz", "--sheet", "unified", "--format", "tsv", "-q", text=True)
    assert len(body) == len(csv_rows.stdout.splitlines()) - 1  # one line per row: nothing wrapped
    assert "4,055.251" in body[0] and "aten::mm" in body[0]  # aten::mm time sum in full


def test_models_help_says_the_file_is_executed():
    text = " ".join(help_text("analyze").split())
    assert "it is executed" in text and "--keep-going" in text


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_shows_metavars_not_python_types(cmd):
    text = help_text(cmd)
    assert not re.search(r"<(list\[|str>|int>|float>|path>)", text), text


def test_analyze_help_groups_its_options():
    text = help_text("analyze")
    titles = [line for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    for t in ("Arguments:", "Outputs:", "GPU spec and models:", "Several traces (one per rank):", "Checks:"):
        assert t in titles, titles
    assert "  --csv-dir DIR " in text and "  -j, --jobs N " in text and "  TRACE...  " in text


def test_every_option_is_in_a_section_and_bench_pa_groups_its_own():
    """Only -h stays under the catch-all "Options"; bench-pa's lists say they are lists."""
    for cmd in ("analyze", "diff", "bench-pa"):
        text = help_text(cmd)
        rest = text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0] if "\nOptions:\n" in text else ""
        assert [ln.split()[0] for ln in rest.splitlines() if ln.startswith("  -")] in ([], ["-h,"]), (cmd, rest)
    text = help_text("bench-pa")
    titles = [line for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert {"Shapes:", "Backends and timing:", "Outputs:"} <= set(titles), titles
    assert "  --context LEN,... " in text and "  --csv FILE " in text and "  --kv-dtype bf16|fp8,... " in text


def test_format_help_states_its_default_once():
    for cmd in ("analyze", "diff"):
        lines = help_text(cmd).split("  --format csv|tsv|json|table", 1)[1].splitlines()
        part = " ".join(
            [lines[0], *[x for x in lines[1 : next(i for i, x in enumerate(lines) if x.startswith("  -") and i)]]]
        )
        part = " ".join(part.split())
        assert part.count("[default:") == 1 and "[default: csv with --sheet]" in part, part


def test_shell_completion_is_installable(monkeypatch):
    r = runner.invoke(app, ["--help"])
    assert "--install-completion" in r.output and "--show-completion" in r.output
    # typer's --show-completion is a flag naming the shell it detects from the parent process
    # (shellingham): under `make` that is sh, which it does not support. Its own switch turns the
    # flag into an option taking the shell's name, so the test does not depend on who started it
    # (it read the parent's shell before: `bash .ci/run` -> make -> sh -c -> pytest failed).
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    for shell, mark in (
        ("bash", "complete -o default"),
        ("zsh", "#compdef perfreport"),
        ("fish", "complete --command perfreport"),
    ):
        r = runner.invoke(app, ["--show-completion", shell], prog_name="perfreport")
        assert r.exit_code == 0 and mark in r.output and "_PERFREPORT_COMPLETE" in r.output, (shell, r.output)


ARCH_KEYS = sorted(s.key for s in list_archs())


@pytest.mark.parametrize(
    "words,want",
    [
        ("perfreport analyze t.json --arch mi3", [k for k in ARCH_KEYS if k.startswith("mi3")]),
        ("perfreport diff a b --arch-b h", [k for k in ARCH_KEYS if k.startswith("h")]),
        ("perfreport diff a b --format t", ["tsv", "table"]),
        ("perfreport analyze t.json --basis a", ["achievable"]),
    ],
)
def test_completion_offers_the_values_an_option_takes(words, want):
    env = {"_PERFREPORT_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    r = runner.invoke(app, [], prog_name="perfreport", env=env)
    assert r.exit_code == 0 and r.output.split() == want, r.output
