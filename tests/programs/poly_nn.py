"Fit a third-order polynomial to sin(x) with nn.Sequential, MSELoss and a hand-written SGD step."
import math
import numpy as np
import torch

def init_from_numpy(model, seed):
    "Copy numpy draws into every parameter, so that every library starts from the same weights."
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape)).astype(np.float32)))

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)  # (2000, 3): x, x^2, x^3

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
init_from_numpy(model, seed=0)
loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-6
for t in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 500 == 499: print(t, loss.item())
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
w = linear_layer.weight[:, 0], linear_layer.weight[:, 1], linear_layer.weight[:, 2]
print(f"Result: y = {linear_layer.bias.item()} + {w[0].item()} x + {w[1].item()} x^2 + {w[2].item()} x^3")
result = {"loss": loss.item(), "parameters": [p.detach().numpy() for p in model.parameters()]}
