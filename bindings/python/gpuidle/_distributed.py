"""The job's report on rank 0 through torch.distributed: ``profile(merge_ranks=True)``.

Every rank sends its own report (its JSON, zlib-compressed) to rank 0 with one object
collective of the default process group (``torch.distributed.gather_object``, or
``all_gather_object`` where a torch lacks it), and rank 0 merges them
(:func:`gpuidle.merge_reports`). No network code of gpuidle's own: the transport, the
rendezvous and the timeout are those of the user's process group.

Like any collective, the gather needs every rank of the group to reach it: every rank must
leave its profile block (or call :meth:`Profile.stop`), a rank without a report (no GPU, an
inert profile) included. With NCCL the object collective goes through
``torch.cuda.current_device()``: each rank must have set its own device
(``torch.cuda.set_device(local_rank)``), as DDP programs do. gpuidle never imports torch: without
``import torch`` in the program there is no process group, and nothing is gathered.
"""

from __future__ import annotations

import sys
import zlib
from typing import Any, Optional

from ._native import _gpuidle
from ._report import Report

# A report's JSON compresses about tenfold; level 1 costs a few ms for a rank's report.
_COMPRESSION_LEVEL = 1


def _warn(message: str) -> None:
    sys.stderr.write(f"gpuidle: warning: {message}\n")
    sys.stderr.flush()


def _torch_distributed() -> Any:
    """torch.distributed if the program imported torch and a default process group is up."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        import torch.distributed as dist
    except Exception:  # a torch built without distributed support
        return None
    try:
        if not dist.is_available() or not dist.is_initialized():
            return None
    except Exception:
        return None
    return dist


def job_size() -> int:
    """The world size of the initialised default process group, else 0."""
    dist = _torch_distributed()
    if dist is None:
        return 0
    try:
        return int(dist.get_world_size())
    except Exception:
        return 0


def gather_job_report(report: Optional[Report], *, dist: Any = None) -> Optional[Report]:
    """Gathers every rank's report to rank 0 and merges them there: the job's report on rank
    0, None on the other ranks.

    A collective of the default process group: every rank must call it (``report`` may be None
    on a rank without one). Returns None with no message when torch.distributed is not
    initialised or the world has one rank. Never raises: a failure of the gather or the merge
    is one warning line and None. ``dist`` is ``torch.distributed`` unless given (tests).
    """
    if dist is None:
        dist = _torch_distributed()
        if dist is None:
            return None
    try:
        world = int(dist.get_world_size())
        if world <= 1:
            return None
        rank = int(dist.get_rank())
        payload = (zlib.compress(report.to_json().encode("utf-8"), _COMPRESSION_LEVEL)
                   if report is not None else None)
        if hasattr(dist, "gather_object"):
            gathered: Optional[list[Any]] = [None] * world if rank == 0 else None
            dist.gather_object(payload, gathered, dst=0)
        else:  # torch < 1.8: every rank receives every report, only rank 0 keeps them
            everyone: list[Any] = [None] * world
            dist.all_gather_object(everyone, payload)
            gathered = everyone if rank == 0 else None
            del everyone
        if rank != 0 or gathered is None:
            return None
        return _merge(gathered)
    except Exception as e:  # the program goes on without the job's report
        _warn(f"the job's report was not gathered ({type(e).__name__}: {e})")
        return None


def _merge(gathered: list[Any]) -> Optional[Report]:
    texts: list[str] = []
    names: list[bytes] = []
    missing: list[int] = []
    for r, payload in enumerate(gathered):
        if payload is None:
            missing.append(r)
        else:
            texts.append(zlib.decompress(payload).decode("utf-8"))
            names.append(f"rank {r}".encode())
    if not texts:
        _warn("no rank had a report; no job report")
        return None
    if missing:
        shown = ", ".join(map(str, missing[:16])) + (", ..." if len(missing) > 16 else "")
        _warn(f"rank{'s' if len(missing) > 1 else ''} {shown} had no report: the job's report "
              f"merges the other {len(texts)} (waits for peers are then underestimated)")
    gathered.clear()  # the compressed copies go before the merge
    return Report._from_native(_gpuidle.merge_reports(texts, names))
