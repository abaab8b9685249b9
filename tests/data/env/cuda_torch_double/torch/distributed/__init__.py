"""torch.distributed of the stand-in."""


def is_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return True
