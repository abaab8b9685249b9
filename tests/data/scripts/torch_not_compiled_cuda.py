"""A training script that assumes a GPU: on a CPU-only torch build `.cuda()` raises
'Torch not compiled with CUDA enabled'."""

from torch import nn

model = nn.Linear(8, 2)
print("building model", flush=True)
model = model.cuda()
print("on the GPU")
