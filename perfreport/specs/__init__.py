"""GPU specs for the roofline: one JSON file per GPU in ``perfreport/specs/data``.

File format (every figure cites its source in ``sources``)::

    {"key": "h100_sxm", "name": "...", "aliases": ["h100", ...],
     "match": {"name_patterns": ["H100 80GB HBM3"],          # regex, searched, case-insensitive
               "constraints": {"mem_gib": [75, 85], "num_sms": [132]},  # optional: must agree
                                                      # when the trace records them
               "fallback": {"compute_major": 9, "compute_minor": 0, "num_sms": 132,
                            "mem_gib": [75, 82]}},            # for empty / unknown names
     "mem_bw_tbps": 3.35,                                     # decimal TB/s (10^12 B/s)
     "llc_bytes": 52428800,                                   # last-level cache (L2 / Infinity Cache)
     "host_link_gbps": 64.0,                                  # host link (PCIe), decimal GB/s per direction
     "peaks_tflops": {"matrix_bf16": 989.4, ...},             # DENSE peaks, TFLOP/s (10^12)
     "achievable": {"mem_bw_tbps": 4.47, "peaks_tflops": {...}, "source": "..."},  # optional
     "interconnect": {"link": "NVLink 4", "link_bidirectional_GBps": 900,
                      "link_per_direction_GBps": 450, "pcie": "PCIe Gen5 x16", ...},  # GB/s
     "sources": {"mem_bw_tbps": "...", ...}}

Compute-spec names are ``matrix_<precision>`` (tensor cores / MFMA) and ``vector_<precision>``
(CUDA cores / SIMD). ``matrix_fp32`` is the FP32 GEMM rate WITHOUT TF32 (``matrix_tf32``).
With ``basis='achievable'`` the measured figures replace the peaks they cover; ``GpuSpec.basis``
says ``'achievable'`` only if at least one figure was replaced, so a report never claims a
basis it did not use.
"""

from __future__ import annotations

import json
import math
import re
import msgspec
from msgspec import field
from pathlib import Path
from typing import Any

from perfreport.errors import BadInput

DATA_DIR = Path(__file__).parent / "data"


class GpuSpec(msgspec.Struct, frozen=True):
    """One GPU's roofline figures, read from a cited spec file (``perfreport archs``):
    ``mem_bw_tbps`` (TB/s), ``peaks`` (precision -> TFLOP/s), ``llc_bytes``, on ``basis`` peak
    or achievable; ``sources`` names the datasheet of each figure."""

    key: str
    name: str
    mem_bw_tbps: float | None
    peaks: dict[str, float]
    llc_bytes: int | None
    basis: str = "peak"  # 'peak' | 'achievable'
    host_link_gbps: float | None = None  # host<->device link, GB/s (10^9 B/s) per direction
    sources: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    match: dict[str, Any] = field(default_factory=dict)
    # GPU-to-GPU link and PCIe, GB/s (10^9 B/s): link_per_direction_GBps is what a collective's
    # bus bandwidth is set against (perfreport.multi.collectives)
    interconnect: dict[str, Any] = field(default_factory=dict)
    # basis 'achievable' asked for, but the spec file has no achievable figure for these
    # ("memory bandwidth", peak keys): they stay at the datasheet peak (the report warns)
    peak_fallback: tuple[str, ...] = ()


def _norm(s: str) -> str:
    return re.sub(r"[\s\-]+", "_", s.strip().lower())


def _bad(origin: str, where: str, want: str, v) -> BadInput:
    got = "null" if v is None else type(v).__name__
    shown = repr(v) if isinstance(v, (int, float, str)) and not isinstance(v, bool) else got
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return BadInput(origin, f"GPU spec field {where} must be {want}, not {shown}")


def _positive(origin: str, where: str, v, optional: bool = True) -> None:
    if v is None and optional:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise _bad(origin, where, "a positive finite number", v)


def _peaks(origin: str, where: str, v) -> None:
    if v is None:
        return
    if not isinstance(v, dict):
        raise _bad(origin, where, "an object of {compute spec: TFLOP/s}", v)
    for k, x in v.items():
        _positive(origin, f"{where}.{k}", x, optional=False)


def validate(doc: dict, origin: str) -> None:
    """Refuse a spec document with a wrong field type or a non-positive figure, naming the
    field (a negative peak would give a negative roofline time)."""
    if not isinstance(doc.get("key"), str) or not doc["key"].strip():
        raise _bad(origin, "key", "a non-empty string", doc.get("key"))
    if "name" in doc and not isinstance(doc["name"], str):
        raise _bad(origin, "name", "a string", doc["name"])
    _positive(origin, "mem_bw_tbps", doc.get("mem_bw_tbps"))
    _peaks(origin, "peaks_tflops", doc.get("peaks_tflops"))
    llc = doc.get("llc_bytes")
    if llc is not None and (isinstance(llc, bool) or not isinstance(llc, int) or llc < 0):
        raise _bad(origin, "llc_bytes", "a non-negative integer", llc)
    for k in ("aliases",):
        v = doc.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise _bad(origin, k, "a list of strings", v)
    for k in ("sources", "match"):
        if not isinstance(doc.get(k, {}), dict):
            raise _bad(origin, k, "an object", doc.get(k))
    pats = doc.get("match", {}).get("name_patterns", [])
    if not isinstance(pats, list) or not all(isinstance(x, str) for x in pats):
        raise _bad(origin, "match.name_patterns", "a list of strings", pats)
    for x in pats:
        try:
            re.compile(x)
        except re.error as exc:
            raise BadInput(origin, f"GPU spec field match.name_patterns: bad regex {x!r} ({exc})") from None
    cons = doc.get("match", {}).get("constraints", {})
    if not isinstance(cons, dict):
        raise _bad(origin, "match.constraints", "an object", cons)
    mem = cons.get("mem_gib")
    if mem is not None and not (
        isinstance(mem, list) and len(mem) == 2 and all(isinstance(x, (int, float)) for x in mem) and mem[0] <= mem[1]
    ):
        raise _bad(origin, "match.constraints.mem_gib", "a [low, high] pair of GiB", mem)
    sms = cons.get("num_sms")
    if sms is not None and not (isinstance(sms, list) and all(isinstance(x, int) for x in sms)):
        raise _bad(origin, "match.constraints.num_sms", "a list of integers", sms)
    fb = doc.get("match", {}).get("fallback")
    if fb is not None and not isinstance(fb, dict):
        raise _bad(origin, "match.fallback", "an object", fb)
    ach = doc.get("achievable")
    if ach is not None:
        if not isinstance(ach, dict):
            raise _bad(origin, "achievable", "an object", ach)
        _positive(origin, "achievable.mem_bw_tbps", ach.get("mem_bw_tbps"))
        _peaks(origin, "achievable.peaks_tflops", ach.get("peaks_tflops"))


def _from_doc(doc: dict, origin: str, basis: str) -> GpuSpec:
    validate(doc, origin)
    try:
        key = str(doc["key"])
        peaks = {str(k): float(v) for k, v in doc.get("peaks_tflops", {}).items()}
        bw = doc.get("mem_bw_tbps")
        bw = float(bw) if bw is not None else None
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInput(origin, f"not a GPU spec file ({type(exc).__name__}: {exc})") from None
    sources = {str(k): str(v) for k, v in doc.get("sources", {}).items()}
    used = "peak"
    fallback: list[str] = []
    if basis == "achievable":
        ach = doc.get("achievable") or {}
        if ach.get("mem_bw_tbps") is not None:
            bw, used = float(ach["mem_bw_tbps"]), "achievable"
        elif bw is not None:
            fallback.append("memory bandwidth")
        got = ach.get("peaks_tflops") or {}
        for k, v in got.items():
            peaks[k], used = float(v), "achievable"
        fallback += sorted(k for k in peaks if k not in got)
        if used == "achievable":
            sources["achievable"] = str(ach.get("source", "measured"))
    elif basis != "peak":
        raise BadInput(origin, f"basis must be 'peak' or 'achievable', not {basis!r}")
    llc = doc.get("llc_bytes")
    host = doc.get("host_link_gbps")
    try:
        host = float(host) if host is not None else None
    except (TypeError, ValueError):
        raise BadInput(origin, f"host_link_gbps must be a number, not {host!r}") from None
    return GpuSpec(
        key=key,
        name=str(doc.get("name", key)),
        mem_bw_tbps=bw,
        peaks=peaks,
        llc_bytes=int(llc) if llc is not None else None,
        basis=used,
        host_link_gbps=host,
        sources=sources,
        aliases=tuple(doc.get("aliases", ())),
        match=doc.get("match", {}),
        interconnect=dict(doc.get("interconnect") or {}),
        peak_fallback=tuple(fallback),
    )


def _docs() -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text())) for p in sorted(DATA_DIR.glob("*.json"))]


def list_archs() -> list[GpuSpec]:
    """Every built-in GPU (peak basis), sorted by key."""
    return [_from_doc(d, str(p), "peak") for p, d in _docs()]


def load_arch(name_or_path: str, basis: str = "peak") -> GpuSpec:
    """A built-in GPU by key, name or alias (case-insensitive), or a JSON file in the same format."""
    p = Path(name_or_path)
    is_file = p.exists() and not p.is_dir()  # a FIFO / <(...) works too
    if name_or_path.endswith(".json") or is_file:
        if not is_file:
            raise BadInput(name_or_path, "GPU spec file not found")
        try:
            with open(p, "rb") as f:
                text = f.read((1 << 20) + 1)
            if len(text) > 1 << 20:
                raise ValueError("larger than 1 MiB")
            doc = json.loads(text)
        except (OSError, ValueError, RecursionError) as exc:
            msg = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise BadInput(name_or_path, f"unreadable GPU spec file: {msg}") from None
        if not isinstance(doc, dict):
            raise BadInput(name_or_path, "GPU spec file must hold a JSON object")
        return _from_doc(doc, name_or_path, basis)
    want = _norm(name_or_path)
    for path, doc in _docs():
        names = [doc.get("key", ""), doc.get("name", ""), *doc.get("aliases", [])]
        if want in {_norm(n) for n in names if n}:
            return _from_doc(doc, str(path), basis)
    known = ", ".join(s.key for s in list_archs())
    raise BadInput(name_or_path, f"unknown GPU (known: {known}; or pass a .json spec file)")


def _props_agree(doc: dict, props: dict | None) -> bool:
    """The spec's ``match.constraints`` hold for what the trace records (an unrecorded field
    never rules a spec out): totalGlobalMem within ``mem_gib``, numSms in ``num_sms``. Names
    such as 'AMD Instinct MI250X / MI250' (both parts) or 'NVIDIA A100-PG509-200' need them."""
    cons = doc.get("match", {}).get("constraints") or {}
    if not cons or not props:
        return True
    try:
        mem = float(props.get("totalGlobalMem") or 0) / 2**30
        sms = int(props.get("numSms") or 0)
    except (TypeError, ValueError):
        return True
    if mem and "mem_gib" in cons and not cons["mem_gib"][0] <= mem <= cons["mem_gib"][1]:
        return False
    if sms and "num_sms" in cons and sms not in cons["num_sms"]:
        return False
    return True


def _by_name(name: str, props: dict | None) -> GpuSpec | None:
    if not name or not name.strip():
        return None
    for path, doc in _docs():
        for pat in doc.get("match", {}).get("name_patterns", []):
            if re.search(pat, name, re.IGNORECASE) and _props_agree(doc, props):
                return _from_doc(doc, str(path), "peak")
    return None


def detect_arch_from_name(name: str) -> GpuSpec | None:
    """GPU from a device name such as ``torch.cuda.get_device_name()``; None if unknown."""
    return _by_name(name, None)


def _by_fingerprint(props: dict) -> GpuSpec | None:
    try:
        major, minor = int(props.get("computeMajor", -1)), int(props.get("computeMinor", -1))
        sms = int(props.get("numSms", -1))
        mem_gib = float(props.get("totalGlobalMem", 0)) / 2**30
    except (TypeError, ValueError):
        return None
    for path, doc in _docs():
        fb = doc.get("match", {}).get("fallback")
        if not fb:
            continue
        lo, hi = fb.get("mem_gib", [0, float("inf")])
        if (fb.get("compute_major"), fb.get("compute_minor"), fb.get("num_sms")) == (
            major,
            minor,
            sms,
        ) and lo <= mem_gib <= hi:
            return _from_doc(doc, str(path), "peak")
    return None


def detect_arch(device_properties: list[dict] | None) -> GpuSpec | None:
    """GPU from a trace's ``deviceProperties``: by name first, then (ROCm traces may record an
    empty name) by (computeMajor, computeMinor, numSms, totalGlobalMem). None if no match."""
    for props in device_properties or []:
        if not isinstance(props, dict):
            continue
        spec = _by_name(str(props.get("name") or ""), props)
        if spec is None:
            spec = _by_fingerprint(props)
        if spec is not None:
            return spec
    return None


_FAMILY = re.compile(r"(GB200|GH200|B200|H200|H100|H800|H20|A100|A10G|A10|L40S|L40|L4|V100S?|MI\d{3}[AX]?)", re.I)


def close_specs(device_properties: list[dict] | None, limit: int = 4) -> list[GpuSpec]:
    """Built-in specs close to a device that matched none: the same product family in the name
    (A100, V100, MI250 ...), else the same compute capability; at most ``limit``."""
    specs = list_archs()
    out: list[GpuSpec] = []
    for props in device_properties or []:
        if not isinstance(props, dict):
            continue
        fam = _FAMILY.search(str(props.get("name") or ""))
        if fam:
            want = fam.group(1).upper()
            want = want[:5] if want.startswith("MI") else {"V100S": "V100"}.get(want, want)
            out += [s for s in specs if want in s.name.upper() and s not in out]
        if not out:
            cc = (props.get("computeMajor"), props.get("computeMinor"))
            for path, doc in _docs():
                fb = doc.get("match", {}).get("fallback") or {}
                if (fb.get("compute_major"), fb.get("compute_minor")) == cc and cc != (None, None):
                    s = _from_doc(doc, str(path), "peak")
                    if s not in out:
                        out.append(s)
    return out[:limit]


def roofline(spec: GpuSpec, flops: float, bytes: float, compute_spec: str) -> tuple[float | None, str | None]:
    """(roofline time in µs, 'compute' | 'memory'): max(flops / peak, bytes / bandwidth).
    (None, None) when the spec lacks ``compute_spec`` or a bandwidth."""
    peak = spec.peaks.get(compute_spec)
    if not peak or not spec.mem_bw_tbps:
        return None, None
    t_compute = flops / (peak * 1e12)
    t_memory = bytes / (spec.mem_bw_tbps * 1e12)
    if t_compute > t_memory:
        return t_compute * 1e6, "compute"
    return t_memory * 1e6, "memory"


__all__ = [
    "GpuSpec",
    "close_specs",
    "list_archs",
    "load_arch",
    "detect_arch",
    "detect_arch_from_name",
    "roofline",
    "DATA_DIR",
]
