"Fit a third-order polynomial to sin(x) with nn.Sequential and the RMSprop optimizer."
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
xx = x.unsqueeze(-1).pow(p)

model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
init_from_numpy(model, seed=1)
loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-3
optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
for t in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 500 == 499: print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

linear_layer = model[0]
print(f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + ...")
result = {"loss": loss.item(), "parameters": [p.detach().numpy() for p in model.parameters()]}
