"""A profile whose report file cannot be written keeps its report (issue 14): the write error is
one warning and p.output_error, and p.report still holds the analysis. gpuidle is imported
before torch on purpose: a module that exported the libstdc++ linked into it once made that
order abort in free(). Prints one line; exit status 1 if the report is missing."""
import os
import sys
import tempfile

import gpuidle
import torch


def main() -> int:
    missing = os.path.join(tempfile.mkdtemp(), "no-such-folder", "report.json")
    a = torch.randn(2048, 2048, device="cuda")
    with gpuidle.profile(out=missing, quiet=True) as p:
        for _ in range(20):
            a = torch.tanh(a @ a * 1e-3)
        torch.cuda.synchronize()
    ok = p.report is not None and bool(p.output_error) and not os.path.exists(missing)
    busy = ""
    if p.report is not None and p.report.devices:
        busy = f" (busy {p.report.devices[0].busy_ns / 1e6:.1f} ms)"
    kept = "kept" if p.report is not None else "missing"
    print(f"unwritable output: {'PASS' if ok else 'FAIL'}: report {kept}{busy}; "
          f"output error: {p.output_error!r}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
