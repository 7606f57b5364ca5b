"A small variational autoencoder on synthetic binary patterns: reparameterisation, BCE + KL, Adam."
import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F

class VAE(nn.Module):
    def __init__(self, n_in=16, n_hidden=32, n_latent=2):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc21 = nn.Linear(n_hidden, n_latent)
        self.fc22 = nn.Linear(n_hidden, n_latent)
        self.fc3 = nn.Linear(n_latent, n_hidden)
        self.fc4 = nn.Linear(n_hidden, n_in)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps=None):
        std = torch.exp(0.5 * logvar)
        if eps is None: eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps=None):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar

def loss_function(recon_x, x, mu, logvar):
    "Reconstruction + KL divergence, summed over the batch (Kingma and Welling 2014, appendix B)."
    BCE = F.binary_cross_entropy(recon_x, x, reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD

rng = np.random.default_rng(0)
prototypes = rng.random((4, 16)) < 0.5
flips = rng.random((256, 16)) < 0.1
data = (prototypes[rng.integers(0, 4, 256)] ^ flips).astype(np.float32)

torch.manual_seed(0)
model = VAE()
with torch.no_grad():  # the same start under every library
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
optimizer = optim.Adam(model.parameters(), lr=1e-2)

batch_size = 32
for epoch in range(10):
    model.train()
    train_loss = 0.0
    for i in rng.permutation(len(data)).reshape(-1, batch_size):  # numpy's order and noise: the same runs
        x = torch.tensor(data[i])
        eps = torch.tensor(rng.standard_normal((batch_size, 2)).astype(np.float32))
        optimizer.zero_grad()
        recon, mu, logvar = model(x, eps)
        loss = loss_function(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    print(f"epoch {epoch}: average loss {train_loss / len(data):.4f}")

model.eval()
with torch.no_grad():
    mu, logvar = model.encode(torch.tensor(data))
    sample, _, _ = model(torch.tensor(data[:8]))  # torch.randn_like's noise: checked for shape and range only
    assert tuple(sample.shape) == (8, 16) and 0 <= sample.min().item() and sample.max().item() <= 1
result = {"train_loss": train_loss / len(data), "mu": mu.numpy(), "logvar": logvar.numpy(),
          "parameters": [p.detach().numpy() for p in model.parameters()]}
