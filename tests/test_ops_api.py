"PyTorch's spellings of chapter 01's ops (function forms, keywords, dim/axis, dtype=) and its errors, against torch."
import math, warnings
import numpy as np
import pytest
import torch
import minitorch_nb as mt

DEVICES = ["numpy", "cpu"]
rng = np.random.default_rng(0)

def pair(*shape, positive=False, noncontig=False):
    a = rng.standard_normal(shape)
    if positive: a = np.abs(a) + 0.5
    if noncontig: a = np.asfortranarray(a).T.copy(order="F").T  # same values, other strides
    return a

def both(a, dev, grad=True):
    m = mt.tensor(a, dtype=mt.float64).to(dev)
    t = torch.tensor(a, dtype=torch.float64)
    return (m.requires_grad_() if grad else m), (t.requires_grad_() if grad else t)

def close(m, t, atol=1e-10):
    rtol = 1e-9 if t.dtype == torch.float64 else 2e-6
    np.testing.assert_allclose(np.asarray(m.detach().to("numpy").numpy(), dtype=np.float64),
                               t.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)

UNARY = ["exp", "log", "sin", "cos", "log1p", "expm1", "tan", "sinh", "cosh", "log2", "log10", "sqrt", "tanh",
         "sigmoid", "relu", "abs", "square", "rsqrt", "reciprocal", "neg", "negative", "floor", "ceil", "round",
         "sign"]

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_function_form_values_and_grads(name, dev):
    a = pair(3, 4, positive=name in ("log", "log1p", "log2", "log10", "sqrt", "rsqrt"))
    m, t = both(a, dev)
    mo, to = getattr(mt, name)(m), getattr(torch, name)(t)
    close(mo, to)
    g = rng.standard_normal(a.shape)
    mo.backward(mt.tensor(g, dtype=mt.float64).to(dev)); to.backward(torch.tensor(g))
    close(m.grad, t.grad)
    close(getattr(m.detach(), name)(), getattr(t.detach(), name)())  # the method spelling too

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name", ["log1p", "expm1", "tan", "sinh", "cosh", "square", "reciprocal"])
def test_unary_gradcheck(name, dev):
    x = mt.tensor(pair(2, 3) * 0.5, dtype=mt.float64).to(dev).requires_grad_()
    assert mt.gradcheck(lambda v: getattr(v, name)(), x)

@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("name,kw", [("add", {}), ("add", {"alpha": 2}), ("sub", {"alpha": -0.5}), ("mul", {}),
                                      ("div", {}), ("subtract", {}), ("multiply", {}), ("divide", {}),
                                      ("true_divide", {}), ("maximum", {}), ("minimum", {})])
def test_binary_broadcast_noncontiguous(name, kw, dev):
    a, b = pair(3, 4, noncontig=True), pair(4, positive=True)
    (ma, ta), (mb, tb) = both(a, dev), both(b, dev)
    mo, to = getattr(mt, name)(ma.mT.mT, mb, **kw), getattr(torch, name)(ta, tb, **kw)
    close(mo, to)
    mo.sum().backward(); to.sum().backward()
    close(ma.grad, ta.grad); close(mb.grad, tb.grad)
    close(getattr(ma.detach(), name)(mb.detach(), **kw), getattr(ta.detach(), name)(tb.detach(), **kw))

def test_number_first_and_keyword_input():
    x = mt.tensor([[1., 2.], [3., 4.]]); tx = torch.tensor([[1., 2.], [3., 4.]])
    close(mt.add(2, x), torch.add(2, tx)); close(mt.mul(2, x), torch.mul(2, tx)); close(mt.pow(2, x), torch.pow(2, tx))
    close(mt.matmul(input=x, other=x), torch.matmul(input=tx, other=tx))
    close(mt.sum(input=x, dim=1), torch.sum(input=tx, dim=1))
    close(mt.exp(input=x), torch.exp(input=tx))
    for f in ("exp", "sum", "sin", "mm"):
        with pytest.raises(TypeError): getattr(torch, f)(2.0)
        with pytest.raises(TypeError): getattr(mt, f)(2.0)

@pytest.mark.parametrize("dev", DEVICES)
def test_mm_t_view_as_norm_type(dev):
    a, b = pair(3, 4), pair(4, 2)
    (ma, ta), (mb, tb) = both(a, dev), both(b, dev)
    mo, to = mt.mm(ma, mb), torch.mm(ta, tb)
    close(mo, to); mo.sum().backward(); to.sum().backward(); close(ma.grad, ta.grad); close(mb.grad, tb.grad)
    close(ma.t(), ta.t()); close(mt.t(ma), torch.t(ta))
    close(ma.view_as(mt.zeros(2, 6)), ta.view_as(torch.zeros(2, 6)))
    for p in ("fro", 2, 1, 3, math.inf, -math.inf):
        close(ma.norm(p=p), ta.norm(p=p))
        close(ma.norm(p=p, dim=1, keepdim=True), ta.norm(p=p, dim=1, keepdim=True))
    ma.grad = None; ta.grad = None
    ma.norm().backward(); ta.norm().backward(); close(ma.grad, ta.grad)
    assert mt.tensor([1., 2.]).type() == torch.tensor([1., 2.]).type() == "torch.FloatTensor"
    assert mt.tensor([1, 2]).type() == torch.tensor([1, 2]).type() == "torch.LongTensor"
    assert str(mt.tensor([1.]).type("torch.DoubleTensor").dtype) == "float64"
    assert mt.tensor([1.]).type(mt.int32).dtype == mt.int32
    assert mt.tensor([1.5]).clip(0, 1).tolist() == torch.tensor([1.5]).clip(0, 1).tolist()

def test_mm_t_errors_as_torch():
    for f in (lambda L: L.mm(L.ones(3), L.ones(3)), lambda L: L.ones(2, 2, 2).t(),
              lambda L: L.ones(2).div(2, rounding_mode="x"), lambda L: L.linspace(1, 2, -1),
              lambda L: L.tensor([1, 2]) ** -2):
        with pytest.raises(RuntimeError): f(torch)
        with pytest.raises(RuntimeError): f(mt)

def test_integer_tensor_to_negative_tensor_power_truncates_as_torch():
    b, e = [2, 1, -1, -1, 3], [-2, -3, -3, -2, 2]
    assert (mt.tensor(b) ** mt.tensor(e)).tolist() == (torch.tensor(b) ** torch.tensor(e)).tolist()

def test_div_rounding_modes():
    for a, b in (([5, -5, 7], 2), ([5.5, -5.5, 7.], 2.)):
        for mode in ("floor", "trunc"):
            m, t = mt.tensor(a).div(b, rounding_mode=mode), torch.tensor(a).div(b, rounding_mode=mode)
            assert m.tolist() == t.tolist() and str(m.dtype) == str(t.dtype).removeprefix("torch.")

@pytest.mark.parametrize("dev", DEVICES)
def test_dim_axis_keepdim_dtype(dev):
    a = pair(2, 3, 4)
    m, t = both(a, dev, grad=False)
    for name in ("sum", "mean", "amax", "logsumexp", "var", "std"):
        for dim in (1, -1, (0, 2)):
            if name in ("var", "std") and isinstance(dim, tuple): continue
            close(getattr(mt, name)(m, axis=dim), getattr(torch, name)(t, axis=dim))
            close(getattr(m, name)(dim=dim, keepdim=True), getattr(t, name)(dim=dim, keepdim=True))
    close(mt.max(m, axis=1).values, torch.max(t, dim=1).values)
    close(mt.argmax(m, axis=2), torch.argmax(t, dim=2))
    i = mt.tensor([[1, 2], [3, 4]]); ti = torch.tensor([[1, 2], [3, 4]])
    for dt, tdt in ((mt.float64, torch.float64), (mt.float32, torch.float32)):
        close(i.sum(dtype=dt), ti.sum(dtype=tdt)); close(i.mean(dim=0, dtype=dt), ti.mean(dim=0, dtype=tdt))
        assert str(i.sum(dtype=dt).dtype) == str(ti.sum(dtype=tdt).dtype).removeprefix("torch.")
    assert i.sum().dtype == mt.int64 and mt.tensor([True, True]).sum().item() == 2
    assert (i > 2).any(axis=1).tolist() == (ti > 2).any(axis=1).tolist()
    with pytest.raises(TypeError): m.sum(dim=0, axis=0)
    with pytest.raises(IndexError): m.sum(axis=3)
    with pytest.raises(IndexError): t.sum(axis=3)

@pytest.mark.parametrize("dev", DEVICES)
def test_amax_ties_share_gradient(dev):
    m, t = both(np.array([[1., 3., 3.], [2., 0., 2.]]), dev)
    m.amax(1).sum().backward(); t.amax(1).sum().backward()
    close(m.grad, t.grad)

@pytest.mark.parametrize("dev", DEVICES)
def test_pow_gradients_at_zero_as_torch(dev):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base, expo = [0., 0., 2., 0.], [0., 0.3, 1.5, 2.]
        cases = [lambda a, b: a ** b, lambda a, b: 0 ** b, lambda a, b: a ** 0.0, lambda a, b: a ** 0,
                 lambda a, b: a ** 2, lambda a, b: a ** 0.5, lambda a, b: a.pow(b)]
        for f in cases:
            (ma, ta), (mb, tb) = both(np.array(base), dev), both(np.array(expo), dev)
            close(f(ma, mb), f(ta, tb))
            gm = mt.autograd.grad(f(ma, mb).sum(), [ma, mb], allow_unused=True)
            gt = torch.autograd.grad(f(ta, tb).sum(), [ta, tb], allow_unused=True)
            for x, y in zip(gm, gt):
                assert (x is None) == (y is None)
                if x is not None: close(x, y)

@pytest.mark.parametrize("dev", DEVICES)
def test_pow_gradcheck_away_from_zero(dev):
    a = mt.tensor(pair(2, 3, positive=True), dtype=mt.float64).to(dev).requires_grad_()
    b = mt.tensor(pair(3), dtype=mt.float64).to(dev).requires_grad_()
    assert mt.gradcheck(lambda x, y: x.pow(y), a, b)
    assert mt.gradcheck(lambda x: mt.pow(x, 0.0) + x ** 3, a)

def test_isnan_isinf_isfinite():
    v = [1., math.inf, -math.inf, math.nan]
    for name in ("isnan", "isinf", "isfinite"):
        assert getattr(mt, name)(mt.tensor(v)).tolist() == getattr(torch, name)(torch.tensor(v)).tolist()
