"An MLP classifier on three Gaussian blobs, fed by TensorDataset and DataLoader, with SGD and StepLR."
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Sampler, TensorDataset

class NumpyShuffle(Sampler):
    "A shuffling sampler drawing from numpy, so that every library sees the batches in the same order."
    def __init__(self, n, seed):
        self.n, self.rng = n, np.random.default_rng(seed)
    def __iter__(self): return iter(self.rng.permutation(self.n).tolist())
    def __len__(self): return self.n

class MLP(nn.Module):
    def __init__(self, n_in=2, n_hidden=32, n_out=3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)
    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))

rng = np.random.default_rng(0)
centers = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]], dtype=np.float32)
labels = rng.integers(0, 3, size=300)
points = (centers[labels] + rng.standard_normal((300, 2))).astype(np.float32)
dataset = TensorDataset(torch.tensor(points), torch.tensor(labels))
loader = DataLoader(dataset, batch_size=32, sampler=NumpyShuffle(len(dataset), seed=1))

torch.manual_seed(0)
model = MLP()
with torch.no_grad():  # the same start under every library
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape)).astype(np.float32)))

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
lrs = []
for epoch in range(15):
    model.train()
    total, correct, seen = 0.0, 0, 0
    for xb, yb in loader:
        optimizer.zero_grad()
        out = model(xb)
        loss = criterion(out, yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(yb)
        correct += (out.argmax(dim=1) == yb).sum().item()
        seen += len(yb)
    lrs.append(scheduler.get_last_lr()[0])
    scheduler.step()
    print(f"epoch {epoch}: loss {total / seen:.4f} accuracy {correct / seen:.3f}")

model.eval()
with torch.no_grad():
    test_loss = criterion(model(torch.tensor(points)), torch.tensor(labels)).item()
result = {"train_loss": total / seen, "test_loss": test_loss, "lrs": lrs,
          "parameters": [p.detach().numpy() for p in model.parameters()]}
