"""Out of memory from fragmentation alone: a pipeline caches many mid-sized feature tensors
(9.5 MiB each), drops every other one, then asks for one large batch buffer.

PyTorch's caching allocator packs requests between 1 and 10 MiB into 20 MiB segments, two of
these tensors per segment; dropping one of each pair leaves every segment half used, so none can
be returned to the driver, and the large buffer does not fit in any 10.5 MiB hole. Far more
memory is free than the buffer needs, but none of it in one piece: OOM. With
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the allocator can unmap the holes' pages and map
them again behind one range, and the same request succeeds.
Sizes follow the free memory of the GPU it runs on (80-140 GiB cards alike)."""

import sys

import torch

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
torch.cuda.init()
free, total = torch.cuda.mem_get_info()
MIB = 1 << 20
feature = int(9.5 * MIB)  # under 10 MiB: served from 20 MiB segments
pairs = int(free * 0.80) // (20 * MIB)
print(
    f"free {free / 2**30:.1f} GiB of {total / 2**30:.1f} GiB; caching {2 * pairs} features",
    flush=True,
)
kept, dropped = [], []
for _ in range(pairs):
    kept.append(torch.empty(feature, dtype=torch.uint8, device="cuda"))
    dropped.append(torch.empty(feature, dtype=torch.uint8, device="cuda"))
del dropped  # every other feature: each segment keeps one live tensor
in_use = torch.cuda.memory_allocated()
reserved = torch.cuda.memory_reserved()
print(
    f"in use {in_use / 2**30:.1f} GiB, reserved {reserved / 2**30:.1f} GiB, "
    f"free outside the cache {torch.cuda.mem_get_info()[0] / 2**30:.1f} GiB",
    flush=True,
)
big = int(free * 0.30) // (2 * MIB) * (2 * MIB)  # well under the memory not in use
print(f"allocating the {big / 2**30:.1f} GiB batch buffer", flush=True)
batch = torch.empty(big, dtype=torch.uint8, device="cuda")
batch.fill_(1)
torch.cuda.synchronize()
print("allocated the batch buffer; training finished")
