"""A reproducible-training script: deterministic mode on, then an op with no deterministic
implementation on the device in use. On the CPU, torch.Tensor.put_ with accumulate=False is one
such op (it raises under torch.use_deterministic_algorithms(True) on every device)."""

import torch

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
print("deterministic mode on", flush=True)
counts = torch.zeros(10)
index = torch.tensor([1, 3, 3, 7])
for step in range(3):
    counts.put_(index, torch.ones(4), accumulate=False)
    print(f"step {step} done", flush=True)
print("training finished")
