"""Out of memory from fragmentation alone: a data pipeline that keeps half of each large buffer
it allocated (variable-length batches), then asks for one large tensor. More than enough memory
is free in total, but none of it in one piece, so the caching allocator fails; with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True it can unmap the holes and map one range.
Sizes follow the free memory of the GPU it runs on."""

import sys

import torch

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
torch.cuda.init()
free, total = torch.cuda.mem_get_info()
MB2 = 2 << 20
n = 16
segment = int(free * 0.80 / n) // (2 * MB2) * (2 * MB2)  # halves stay 2 MiB aligned
print(
    f"free {free / 2**30:.1f} GiB of {total / 2**30:.1f} GiB; {n} buffers of "
    f"{segment / 2**30:.2f} GiB",
    flush=True,
)
buffers = [torch.empty(segment, dtype=torch.uint8, device="cuda") for _ in range(n)]
del buffers  # cached by the allocator, not returned to the driver
kept = []
for _ in range(n):
    first = torch.empty(segment // 2, dtype=torch.uint8, device="cuda")
    second = torch.empty(segment // 2, dtype=torch.uint8, device="cuda")
    kept.append(first)  # each cached buffer now has a kept half and a free half
    del second
in_use = torch.cuda.memory_allocated()
reserved = torch.cuda.memory_reserved()
print(f"in use {in_use / 2**30:.1f} GiB, reserved {reserved / 2**30:.1f} GiB", flush=True)
big = int(free * 0.30) // MB2 * MB2  # well under the memory not in use
print(f"allocating the {big / 2**30:.1f} GiB batch buffer", flush=True)
batch = torch.empty(big, dtype=torch.uint8, device="cuda")
batch.fill_(1)
torch.cuda.synchronize()
print("allocated the batch buffer; training finished")
