"Softmax regression written with einsum and Adam, then evaluated under inference_mode: top-2 accuracy with topk."
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(0)
n, d, k = 240, 6, 5
true_w = rng.standard_normal((d, k))
x_np = rng.standard_normal((n, d)).astype(np.float32)
labels = np.argmax(x_np @ true_w + 0.5 * rng.standard_normal((n, k)), axis=1)
x, y = torch.tensor(x_np), torch.tensor(labels)

W = torch.tensor((0.1 * rng.standard_normal((d, k))).astype(np.float32), requires_grad=True)
b = torch.zeros(k, requires_grad=True)
optimizer = torch.optim.Adam([W, b], lr=0.05)
for step in range(150):
    logits = torch.einsum("ni,ik->nk", x, W) + b
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.inference_mode():  # evaluation: nothing recorded, and nothing made here may enter autograd later
    scores = torch.einsum(x, [0, 1], W, [1, 2], [0, 2]) + b  # the sublist form of the same product
    top2 = scores.topk(2, dim=1).indices
    top2_accuracy = (top2 == y[:, None]).any(dim=1).float().mean()
    accuracy = (scores.argmax(dim=1) == y).float().mean()
assert scores.is_inference() and not scores.requires_grad
try:
    (W * scores).sum()  # an inference tensor may not be saved for a backward pass
    refused = 0.0
except RuntimeError:
    refused = 1.0
print(f"loss {loss.item():.4f}, accuracy {accuracy.item():.3f}, top-2 accuracy {top2_accuracy.item():.3f}")
result = {"loss": loss.item(), "parameters": [W.detach().numpy(), b.detach().numpy()],
          "accuracy": accuracy.item(), "top2_accuracy": top2_accuracy.item(), "refused": refused}
