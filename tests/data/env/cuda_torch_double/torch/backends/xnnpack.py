"""torch.backends.xnnpack of the stand-in."""

enabled = True
