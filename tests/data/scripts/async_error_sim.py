"""How an asynchronous CUDA error is reported, played on the CPU (which has no asynchronous
kernels): the lookup with the bad index fails, but the error surfaces at the next call that
synchronises, unless CUDA_LAUNCH_BLOCKING=1 makes every launch synchronous. The messages are the
ones PyTorch prints on a GPU; the real GPU version is tests/data/scripts/gpu/embedding_oob.py."""

import os
import sys

ERROR = (
    "torch.AcceleratorError: CUDA error: device-side assert triggered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
)
pending = []


def lookup(table, index):
    if index >= len(table):
        sys.stderr.write(
            "indexing.cu:1553: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] "
            "Assertion `srcIndex < srcSelectDimSize` failed.\n"
        )
        if os.environ.get("CUDA_LAUNCH_BLOCKING") == "1":
            raise RuntimeError(ERROR)
        pending.append(ERROR)
        return 0.0
    return table[index]


def synchronize():
    if pending:
        raise RuntimeError(pending[0])


table = [0.5] * 1000
print("step 0", flush=True)
total = sum(lookup(table, i) for i in (3, 1003, 7))
synchronize()
print("total", total)
