"""A saliency map for a trained sequence classifier: model.eval(), gradient of the class score
with respect to the input. cuDNN's RNN backward exists only in training mode."""

import sys

import torch
from torch import nn

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
device = torch.device("cuda")
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(
            input_size=12, hidden_size=48, num_layers=2, batch_first=True, dropout=0.2
        )
        self.head = nn.Linear(48, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.rnn(x)
        return self.head(h[:, -1])


model = Classifier().to(device)
model.eval()
maps = []
for i in range(8):
    x = torch.randn(1, 50, 12, device=device, requires_grad=True)
    score = model(x)[0].max()
    score.backward()
    maps.append(x.grad.abs().sum(-1))
    print(f"sample {i} saliency peak at t={int(maps[-1].argmax())}", flush=True)
print("saliency maps done")
