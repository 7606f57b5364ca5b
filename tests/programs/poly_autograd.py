"Fit a third-order polynomial to sin(x) with tensors and autograd, updating the weights by hand."
import math
import numpy as np
import torch

dtype = torch.float
rng = np.random.default_rng(0)
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

# random weights from numpy, so that every library starts from the same point
a, b, c, d = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in rng.standard_normal(4).astype(np.float32))

learning_rate = 1e-6
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 500 == 499: print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad.zero_()
        b.grad.zero_()
        c.grad.zero_()
        d.grad.zero_()

print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
result = {"loss": loss.item(), "coefficients": [a.item(), b.item(), c.item(), d.item()]}
