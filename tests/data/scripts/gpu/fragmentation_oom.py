"""Out of memory from fragmentation alone: a pipeline warms up with four large activation
buffers, frees them, then caches many 100 MiB feature tensors, drops every other one and asks for
one large batch buffer.

PyTorch's caching allocator keeps the four freed buffers as cached segments and carves the
features out of them; dropping every other feature leaves 100 MiB holes in every segment, so no
segment can be returned to the driver, and the batch buffer (30% of the memory that was free)
fits in no hole although the holes add up to about 40%. Out of memory, with "reserved but
unallocated memory is large" in the message. With PYTORCH_CUDA_ALLOC_CONF=
expandable_segments:True the allocator unmaps the holes' pages and maps them again behind one
range, and the same request succeeds. Sizes follow the free memory of the GPU it runs on."""

import sys

import torch

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
torch.cuda.init()
free, total = torch.cuda.mem_get_info()
MIB = 1 << 20
print(f"free {free / 2**30:.1f} GiB of {total / 2**30:.1f} GiB", flush=True)
warmup = [torch.empty(int(free * 0.2), dtype=torch.uint8, device="cuda") for _ in range(4)]
del warmup  # cached by the allocator, not returned to the driver
feature = 100 * MIB
count = int(free * 0.78) // feature
features = [torch.empty(feature, dtype=torch.uint8, device="cuda") for _ in range(count)]
del features[::2]  # every other feature: each cached segment keeps live tensors between holes
print(
    f"{count // 2} features of 100 MiB kept; in use "
    f"{torch.cuda.memory_allocated() / 2**30:.1f} GiB, reserved "
    f"{torch.cuda.memory_reserved() / 2**30:.1f} GiB",
    flush=True,
)
big = int(free * 0.30) // (2 * MIB) * (2 * MIB)
print(f"allocating the {big / 2**30:.1f} GiB batch buffer", flush=True)
batch = torch.empty(big, dtype=torch.uint8, device="cuda")
batch.fill_(1)
torch.cuda.synchronize()
print("allocated the batch buffer; training finished")
