"""A script that prints far more than anyone keeps (debug output in a hot loop), then fails."""

import sys

for i in range(300_000):
    print(f"step {i} loss {1.0 / (i + 1):.6f} " + "x" * 40)
sys.stdout.flush()
raise RuntimeError("Torch not compiled with CUDA enabled")
