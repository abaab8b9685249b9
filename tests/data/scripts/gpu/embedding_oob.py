"""A language model whose tokenizer has more ids than the embedding table: one batch holds an id
past the end. On the GPU the embedding lookup only queues a kernel; the bounds check fails inside
it and the error is reported later, at whatever call synchronises next (here the LSTM/loss)."""

import sys

import torch
from torch import nn

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
device = torch.device("cuda")
torch.manual_seed(0)
VOCAB = 1000  # the tokenizer actually emits ids up to 1003


class LM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 64)
        self.rnn = nn.LSTM(64, 128, batch_first=True)
        self.head = nn.Linear(128, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.emb(tokens)
        h, _ = self.rnn(x)
        return self.head(h)


model = LM().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    tokens = torch.randint(0, VOCAB, (16, 32), device=device)
    if step == 3:
        tokens[5, 7] = VOCAB + 3  # the out-of-range id
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
print("training finished")
