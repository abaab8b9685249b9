"""`cuda-clinic nccl`: collective bandwidth over torch.distributed, started by torchrun or srun."""
