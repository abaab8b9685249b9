"""Reproducible training: deterministic algorithms on, then a plain matmul (cuBLAS). PyTorch
releases from 1.8 until pytorch/pytorch#161749 refuse it unless CUBLAS_WORKSPACE_CONFIG is set;
newer ones run it."""

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
    y = (x @ w).relu().sum()
    y.backward()
    if step % 5 == 0:
        print(f"step {step} out {y.item():.2f}", flush=True)
print("training finished")
