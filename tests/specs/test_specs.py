"""GPU spec files, lookup, detection and the roofline."""

import json

import pytest

from perfreport.errors import BadInput
from perfreport.specs import detect_arch, detect_arch_from_name, list_archs, load_arch, roofline


def test_all_files_load_with_sources():
    keys = {s.key for s in list_archs()}
    assert {"mi300x", "mi325x", "mi355x", "h100_sxm", "h200", "b200"} <= keys
    assert len(keys) == 29
    for s in list_archs():
        # V100 has FP16 tensor cores only: no matrix_bf16 rather than a borrowed figure
        assert s.mem_bw_tbps and s.peaks["matrix_fp16"] and s.llc_bytes
        assert ("matrix_bf16" in s.peaks) == (not s.key.startswith("v100")), s.key
        assert "mem_bw_tbps" in s.sources and "peaks_tflops" in s.sources
        assert s.basis == "peak"


def test_key_figures():
    h100 = load_arch("H100")
    assert (h100.peaks["matrix_bf16"], h100.peaks["matrix_fp8"], h100.mem_bw_tbps) == (989.4, 1978.9, 3.35)
    assert load_arch("h200").mem_bw_tbps == 4.8
    mi = load_arch("MI300X")
    assert (mi.peaks["matrix_bf16"], mi.peaks["matrix_fp8"], mi.mem_bw_tbps) == (1307.4, 2614.9, 5.3)
    assert load_arch("mi325x").mem_bw_tbps == 6.0
    assert load_arch("mi355x").peaks["matrix_fp4"] == 10066.3
    assert load_arch("b200").peaks["matrix_bf16"] == 2250.0


def test_achievable_basis():
    s = load_arch("h200", basis="achievable")
    assert s.basis == "achievable" and s.mem_bw_tbps == 4.47
    # no measured figures: the spec says it stayed on peak
    assert load_arch("mi300x", basis="achievable").basis == "peak"


def test_unknown_and_file(tmp_path):
    with pytest.raises(BadInput):
        load_arch("a200")
    p = tmp_path / "mine.json"
    p.write_text(
        json.dumps(
            {
                "key": "mine",
                "name": "My GPU",
                "mem_bw_tbps": 1.0,
                "peaks_tflops": {"matrix_bf16": 100.0},
                "llc_bytes": 1,
            }
        )
    )
    s = load_arch(str(p))
    assert s.key == "mine" and s.peaks == {"matrix_bf16": 100.0}
    with pytest.raises(BadInput):
        load_arch(str(tmp_path / "missing.json"))


def test_detect():
    assert detect_arch([{"name": "NVIDIA H100 80GB HBM3"}]).key == "h100_sxm"
    assert detect_arch([{"name": "AMD Instinct MI300X VF"}]).key == "mi300x"
    assert detect_arch_from_name("NVIDIA H200").key == "h200"
    assert detect_arch_from_name("NVIDIA H100 PCIe").key == "h100_pcie"
    # ROCm traces may record an empty name: fall back on the hardware fingerprint
    props = {"name": "", "computeMajor": 9, "computeMinor": 4, "numSms": 304, "totalGlobalMem": 206141652992}
    assert detect_arch([props]).key == "mi300x"
    props256 = dict(props, totalGlobalMem=256 * 2**30)
    assert detect_arch([props256]).key == "mi325x"
    assert (
        detect_arch(
            [
                {
                    "name": "AMD Instinct MI210",
                    "computeMajor": 9,
                    "computeMinor": 0,
                    "numSms": 104,
                    "totalGlobalMem": 68702699520,
                }
            ]
        ).key
        == "mi210"
    )
    assert detect_arch(None) is None and detect_arch([]) is None


def test_roofline():
    h100 = load_arch("h100_sxm")
    # compute-bound: 989.4e12 FLOP at 989.4 TFLOP/s = 1 s = 1e6 µs; 1 MB of bytes is nothing
    t, bound = roofline(h100, 989.4e12, 1e6, "matrix_bf16")
    assert bound == "compute" and t == pytest.approx(1e6)
    # memory-bound: 3.35e9 B at 3.35 TB/s = 1 ms = 1000 µs
    t, bound = roofline(h100, 1e6, 3.35e9, "vector_bf16")
    assert bound == "memory" and t == pytest.approx(1000.0)
    # H100 has no fp4 peak
    assert roofline(h100, 1e9, 1e9, "matrix_fp4") == (None, None)
