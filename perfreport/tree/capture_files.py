"""Capture files on disk: which trace of a capture directory to read (vLLM's
``execution_details.json``, one SGLang trace or its per-size set)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from perfreport.errors import BadInput


MAX_DETAILS_BYTES = 16 << 20  # vLLM writes a few KB: one entry per captured batch size and mode
_PER_BS = re.compile(r".+_bs_(\d+)_rank(\d+)\.json(\.gz)?")


def capture_file(d: Path, annotation: str | None):
    """(file or list of SGLang per-size files, annotation) for a capture directory."""
    if not (d / "execution_details.json").exists():  # SGLang: one trace, or one per size
        files = sorted(f for f in d.iterdir() if f.name.endswith((".json", ".json.gz")))
        per_bs = [f for f in files if _PER_BS.fullmatch(f.name)]
        ranks = {_PER_BS.fullmatch(f.name).group(2) for f in per_bs}
        if not files:
            raise BadInput(
                str(d), "no execution_details.json (vLLM) and no .json/.json.gz capture trace in the directory"
            )
        if len(files) == 1:
            return files[0], annotation
        if files and len(per_bs) == len(files) and len(ranks) == 1:
            return sorted(per_bs, key=lambda f: -int(_PER_BS.fullmatch(f.name).group(1))), None
        raise BadInput(
            str(d),
            f"no execution_details.json and {len(files)} trace files that "
            "are not one rank's <Runner>_bs_<n>_rank<r>.json.gz set: name the file",
        )
    try:
        with open(d / "execution_details.json", "rb") as fh:
            raw = fh.read(MAX_DETAILS_BYTES + 1)
        if len(raw) > MAX_DETAILS_BYTES:
            raise BadInput(
                str(d / "execution_details.json"),
                f"larger than {MAX_DETAILS_BYTES >> 20} MiB (it lists the capture files); not an execution_details.json",
            )
        details = json.loads(raw)
        entries = [(e["file"], f"capture_{e['batch_size']}_{e['mode']}") for e in details]
    except (OSError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise BadInput(str(d), f"unreadable execution_details.json ({exc})") from None
    if annotation is not None:
        entries = [e for e in entries if e[1] == annotation]
    files = sorted({f for f, _ in entries})
    if not files:
        raise BadInput(str(d), f"execution_details.json names no capture {annotation or ''}")
    if len(files) > 1:
        raise BadInput(
            str(d),
            "several capture files ("
            + ", ".join(n for _, n in entries)
            + "): name one as DIR#capture_<batch_size>_<mode>",
        )
    return d / files[0], entries[0][1] if len(entries) == 1 else annotation


__all__ = ["capture_file"]
