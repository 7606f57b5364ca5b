"PyTorch's `.data` and the named in-place methods, against torch."
import numpy as np
import pytest
import torch

import minitorch_nb as mt

RNG = np.random.default_rng(0)


def pair(shape=(3, 4), positive=False, requires_grad=False):
    a = RNG.standard_normal(shape).astype(np.float32)
    if positive: a = np.abs(a) + 0.5
    return (mt.tensor(a.copy(), requires_grad=requires_grad), torch.tensor(a.copy(), requires_grad=requires_grad))


def test_data_is_a_tensor_on_the_same_storage():
    m, t = pair(requires_grad=True)
    md, td = m.data, t.data
    assert isinstance(md, mt.Tensor)
    assert (md.requires_grad, md.is_leaf, md.grad_fn) == (td.requires_grad, td.is_leaf, td.grad_fn)
    md[0, 0] = 7.0; td[0, 0] = 7.0
    assert m[0, 0].item() == t[0, 0].item() == 7.0


def test_write_through_data_escapes_the_version_check_like_torch():
    results = []
    for lib in (mt, torch):
        a = lib.ones(3, requires_grad=True)
        b = a * 1
        c = b.sin()
        b.data.mul_(2)  # invisible to the engine: backward uses the new values
        c.sum().backward()
        results.append(a.grad.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    np.testing.assert_allclose(results[0], [np.cos(2.0)] * 3, rtol=1e-6)


def test_inplace_on_a_saved_tensor_is_caught_like_torch():
    for lib in (mt, torch):
        a = lib.ones(3, requires_grad=True)
        b = a * 1
        c = b.sin()
        with lib.no_grad(): b.mul_(2)
        with pytest.raises(RuntimeError): c.sum().backward()


def test_assigning_data():
    for lib in (mt, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        x.data = lib.ones(5)
        assert list(x.shape) == [5] and x.requires_grad and x.sum().item() == 5
        with pytest.raises(TypeError): x.data = 5


INPLACE = [("add", (1.5,), {}), ("add", ("T",), {"alpha": 2}), ("sub", ("T",), {}), ("mul", (0.5,), {}),
           ("div", ("T+",), {}), ("div", (3.0,), {"rounding_mode": "floor"}), ("pow", (2,), {}), ("neg", (), {}),
           ("abs", (), {}), ("sqrt", (), {"positive": True}), ("rsqrt", (), {"positive": True}), ("exp", (), {}),
           ("expm1", (), {}), ("log", (), {"positive": True}), ("log1p", (), {"positive": True}),
           ("log2", (), {"positive": True}), ("log10", (), {"positive": True}), ("sin", (), {}), ("cos", (), {}),
           ("tan", (), {}), ("tanh", (), {}), ("sigmoid", (), {}), ("sinh", (), {}), ("cosh", (), {}),
           ("relu", (), {}), ("clamp", (-0.5, 0.5), {}), ("clip", (), {"min": 0.0}), ("sign", (), {}),
           ("floor", (), {}), ("ceil", (), {}), ("round", (), {}), ("reciprocal", (), {"positive": True}),
           ("square", (), {}), ("masked_fill", ("M", -1.0), {}), ("addcmul", ("T", "T"), {"value": 0.5}),
           ("addcdiv", ("T", "T+"), {"value": 2.0}), ("asin", (), {}), ("acos", (), {}), ("atan", (), {}),
           ("asinh", (), {}), ("acosh", (), {}), ("atanh", (), {}), ("arcsin", (), {}), ("arccos", (), {}),
           ("arctan", (), {}), ("atan2", ("T",), {}), ("trunc", (), {}), ("fix", (), {}), ("frac", (), {}),
           ("exp2", (), {}), ("fmod", ("T+",), {}), ("remainder", ("T+",), {}), ("floor_divide", ("T+",), {}),
           ("lerp", ("T", 0.3), {}), ("copysign", ("T",), {}), ("nan_to_num", (), {}), ("logical_and", ("T",), {}),
           ("logical_or", ("T",), {}), ("logical_xor", ("T",), {}), ("logical_not", (), {}), ("cumsum", (1,), {}),
           ("cumprod", (0,), {}), ("tril", (), {}), ("triu", (1,), {})]


def test_every_inplace_form_is_in_the_table():
    assert set(mt.ops._INPLACE_FORMS) == {name for name, _, _ in INPLACE}


@pytest.mark.parametrize("name,args,kwargs", INPLACE, ids=[f"{n}_{i}" for i, (n, _, _) in enumerate(INPLACE)])
def test_inplace_method_matches_torch(name, args, kwargs):
    kwargs = dict(kwargs)
    m, t = pair(positive=kwargs.pop("positive", False))
    margs, targs = [], []
    for a in args:
        if a in ("T", "T+"):
            x, y = pair(positive=a == "T+")
        elif a == "M":
            mask = RNG.random((3, 4)) > 0.5
            x, y = mt.tensor(mask), torch.tensor(mask)
        else:
            x = y = a
        margs.append(x); targs.append(y)
    mr, tr = getattr(m, name + "_")(*margs, **kwargs), getattr(t, name + "_")(*targs, **kwargs)
    assert mr is m and tr is t
    with np.errstate(invalid="ignore"):  # asin of |x| > 1 and the like: nan in both
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=2e-6, atol=1e-6)
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_inplace_refusals_match_torch_types():
    for lib in (mt, torch):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError): w.mul_(2)
        with pytest.raises(RuntimeError): lib.arange(3).mul_(0.5)


def test_inplace_on_a_non_leaf_records_the_op():
    grads = []
    for lib in (mt, torch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y.mul_(3).add_(x, alpha=2).sin_()
        y.sum().backward()
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_addcmul_addcdiv_functions():
    (a, ta), (b, tb), (c, tc) = pair(), pair(), pair(positive=True)
    np.testing.assert_allclose(mt.addcmul(a, b, c, value=0.3).numpy(), torch.addcmul(ta, tb, tc, value=0.3).numpy(),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mt.addcdiv(a, b, c, value=0.3).numpy(), torch.addcdiv(ta, tb, tc, value=0.3).numpy(),
                               rtol=1e-6, atol=1e-7)


def test_random_fills_as_methods():
    mt.manual_seed(0)
    w = mt.empty(400, 500)
    assert w.normal_(1.0, 0.5) is w
    assert abs(w.mean().item() - 1.0) < 0.01 and abs(w.std().item() - 0.5) < 0.01
    w.uniform_(-2, 3)
    assert -2 <= w.min().item() and w.max().item() < 3 and abs(w.mean().item() - 0.5) < 0.02


def test_sgd_step_through_data_matches_torch():
    m, t = pair(requires_grad=True)
    for lib, w in ((mt, m), (torch, t)):
        for _ in range(3):
            loss = (w * w).sum()
            loss.backward()
            w.data.sub_(0.1 * w.grad)
            w.grad.zero_()
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6)
