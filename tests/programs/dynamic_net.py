"A dynamic net: each forward pass adds a random number (0 to 2) of x^4, x^5 terms that share one weight."
import math
import random
import numpy as np
import torch

class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        "Python control flow: the graph is rebuilt on every call, with a different depth."
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

def init_from_numpy(model, seed):
    "Copy numpy draws into every parameter, so that every library starts from the same weights."
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(size=tuple(p.shape)).astype(np.float32)))

random.seed(0)  # the depths drawn: Python's random, the same whichever library runs
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

model = DynamicNet()
init_from_numpy(model, seed=2)
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(2000):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 500 == 499: print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

result = {"loss": loss.item(), "parameters": [p.item() for p in model.parameters()]}
