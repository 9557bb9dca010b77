"""Headless Chromium for the browser tests (Debian's ``chromium`` package), networking off."""

from __future__ import annotations

import shutil
import subprocess
import zlib
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no name resolves: nothing can be fetched
    "--proxy-server=127.0.0.1:9",
    "--enable-logging=stderr",
    "--v=0",
]


def binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run(page: Path, tmp: Path, *extra: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """Load ``page`` once in a fresh profile under ``tmp``; stdout/stderr as text."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    cmd = [binary(), *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def console_messages(stderr: str) -> list[str]:
    """What the page wrote to the console (errors, CSP violations, console.log)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def png_pixels(path: Path):
    """The RGB pixels of an 8-bit non-interlaced PNG (as Chromium writes) as a numpy array of
    shape (height, width, 3). Sub/Up rows are undone with numpy, Average/Paeth byte by byte."""
    import numpy as np

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            depth, ctype, interlace = body[8], body[9], body[12]
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG kind"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    stride = w * bpp
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, stride + 1)
    img = np.zeros((h, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].copy()
        if f == 1:
            line = np.cumsum(line.reshape(w, bpp), axis=0, dtype=np.uint8).reshape(stride)
        elif f == 2:
            line = line + prev  # uint8: wraps mod 256, as PNG wants
        elif f in (3, 4):
            cur, up = bytearray(line.tobytes()), prev.tobytes()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = up[i]
                if f == 3:
                    cur[i] = (cur[i] + (a + b) // 2) & 255
                    continue
                c = up[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = np.frombuffer(bytes(cur), dtype=np.uint8)
        img[y] = line
        prev = img[y]
    return img.reshape(h, w, bpp)[:, :, :3]
