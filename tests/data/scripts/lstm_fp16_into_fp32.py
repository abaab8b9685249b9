"""A user's sequence model: the batch arrives as float16 (a mixed-precision data pipeline), the
LSTM was built in float32. Fails on the CPU and on the GPU alike."""

import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(input_size=16, hidden_size=32, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def load_batch() -> torch.Tensor:
    return torch.randn(8, 10, 16).half()  # the pipeline stores features in fp16


model = Tagger()
print("model ready", flush=True)
logits = model(load_batch())
print("logits", logits.shape)
