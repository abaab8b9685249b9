"""Reproducible training with an activation histogram for the logs: deterministic algorithms on,
then torch.histc on CUDA floats, which has no deterministic kernel, so torch refuses it
(measured on torch 2.11: "_histc_cuda with floating point input does not have a deterministic
implementation"). The matmul beside it is fine on torch 2.11 (see deterministic_cublas.py)."""

import sys

import torch

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
device = torch.device("cuda")
w = torch.randn(512, 512, device=device, requires_grad=True)
for step in range(20):
    x = torch.randn(256, 512, device=device)
    act = (x @ w).relu()
    act.sum().backward()
    if step % 5 == 0:
        hist = torch.histc(act.detach(), bins=16)  # activation histogram for the logs
        print(f"step {step} act hist {hist.int().tolist()}", flush=True)
print("training finished")
