"""WGAN-GP on sequences: an LSTM critic and the gradient penalty (Gulrajani et al.), written the
usual way. The penalty's backward needs a second derivative through the critic's LSTM, which
cuDNN does not have."""

import sys

import torch
from torch import nn

if not torch.cuda.is_available():
    sys.exit("this script needs a CUDA GPU")
device = torch.device("cuda")
torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(input_size=8, hidden_size=64, batch_first=True)
        self.out = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.rnn(x)
        return self.out(h[:, -1])


critic = Critic().to(device)
gen = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Linear(128, 20 * 8)).to(device)
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))


def gradient_penalty(real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
    alpha = torch.rand(real.size(0), 1, 1, device=device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    score = critic(mixed)
    (grad,) = torch.autograd.grad(score.sum(), mixed, create_graph=True)
    return ((grad.flatten(1).norm(dim=1) - 1) ** 2).mean()


for step in range(40):
    real = torch.randn(32, 20, 8, device=device)
    fake = gen(torch.randn(32, 16, device=device)).view(32, 20, 8).detach()
    loss = critic(fake).mean() - critic(real).mean() + 10.0 * gradient_penalty(real, fake)
    opt_c.zero_grad()
    loss.backward()
    opt_c.step()
    if step % 10 == 0:
        print(f"step {step} critic loss {loss.item():.4f}", flush=True)
print("training finished")
