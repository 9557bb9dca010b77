"""Per-rank communication/computation overlap: the share of a rank's communication time during
which computation runs on the same GPU.

From the rank's ``gpu_timeline`` (perfreport/tables/timeline.py), per device, with ``U`` the length
of a union of intervals: communication C = U(NCCL/RCCL kernels) and exposed comm
E = U(computation ∪ communication) − U(computation), the communication time no computation
(non-communication kernels and memsets) covers. The overlapped communication is
C − E = |U(comm) ∩ U(computation)|, and

    comm overlapped (%) = 100 × Σ_devices (C − E) / Σ_devices C

(undefined, None, for a rank with no communication kernels). Memcpy is neither: a copy under a
collective does not make it overlapped. Kernels on other streams of the same device count as
computation whether or not they slow the collective down (the trace cannot tell).
"""

from __future__ import annotations

from perfreport.tables import columns as C


def comm_overlap(communication: float, exposed_comm: float) -> float | None:
    """Overlapped share (%) of ``communication`` time given its ``exposed_comm`` part (same unit);
    None when there is no communication."""
    if not communication or communication <= 0:
        return None
    overlapped = min(max(communication - exposed_comm, 0.0), communication)
    return 100.0 * overlapped / communication


def rank_comm_overlap(timeline_rows) -> dict:
    """``{communication (ms), overlapped comm (ms), comm overlapped (%)}`` of one rank from its
    ``gpu_timeline`` rows ``[device, type, time (ms), percent]``, summed over its devices."""
    comm = exposed = 0.0
    for row in timeline_rows:
        kind, ms = row[1], row[2] or 0.0
        if kind == "communication":
            comm += ms
        elif kind == "exposed comm":
            exposed += ms
    share = comm_overlap(comm, exposed)
    return {
        C.COMMUNICATION_MS: comm,
        C.OVERLAPPED_COMM_MS: comm - exposed if share is not None else 0.0,
        C.COMM_OVERLAPPED_PCT: share,
    }


__all__ = ["comm_overlap", "rank_comm_overlap"]
