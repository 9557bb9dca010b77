#!/usr/bin/env python3
"""Regenerate the pictures in docs/img/ from a bundled trace: the workbook's first sheet as
LibreOffice renders it, and the HTML report as headless Chromium renders it.

    python scripts/render_docs_images.py [TRACE]        # default fixtures/h100_qwen_0.5b.json.gz

Needs Debian's libreoffice-calc, poppler-utils (pdftoppm) and chromium:
    apt-get install -y libreoffice-calc poppler-utils chromium
LibreOffice prints the workbook to PDF (landscape, 60% scale, header row and name column on
every page, as the workbook's page setup says); page 1 is the top of unified_perf_summary.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "img"


def need(*names: str) -> list[str]:
    found = []
    for n in names:
        p = next((shutil.which(x) for x in n.split("|") if shutil.which(x)), None)
        if p is None:
            sys.exit(
                f"render_docs_images: {n.split('|')[0]} not found "
                "(apt-get install -y libreoffice-calc poppler-utils chromium)"
            )
        found.append(p)
    return found


def main() -> None:
    soffice, pdftoppm, chromium = need("soffice|libreoffice", "pdftoppm", "chromium|chromium-browser")
    trace = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path("fixtures/h100_qwen_0.5b.json.gz")
    import os

    os.chdir(ROOT)  # the page names the trace as given: keep it relative
    import perfreport

    report = perfreport.analyze(trace)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        xlsx, html = t / "report.xlsx", t / "report.html"
        report.to_excel(xlsx)
        report.to_html(html)
        subprocess.run(
            [
                soffice,
                "--headless",
                "--norestore",
                f"-env:UserInstallation={(t / 'lo').as_uri()}",
                "--convert-to",
                "pdf",
                "--outdir",
                str(t),
                str(xlsx),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        # page 1 at 110 dpi, cropped to the printed area (A4 landscape margins)
        subprocess.run(
            [
                pdftoppm,
                "-f",
                "1",
                "-l",
                "1",
                "-r",
                "110",
                "-x",
                "80",
                "-y",
                "100",
                "-W",
                "1150",
                "-H",
                "800",
                "-png",
                "-singlefile",
                str(t / "report.pdf"),
                str(OUT / "workbook_unified"),
            ],
            check=True,
            timeout=120,
        )
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                f"--user-data-dir={t / 'chromium'}",
                "--window-size=1280,1500",
                f"--screenshot={OUT / 'html_report.png'}",
                html.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    for p in ("workbook_unified.png", "html_report.png"):
        print(f"wrote {(OUT / p).relative_to(ROOT)} ({(OUT / p).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
