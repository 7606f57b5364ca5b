"""Chapter 06c's CUDA kernels under Numba's CUDA simulator. Run by tests/test_cuda_sim.py in a child process,
because NUMBA_ENABLE_CUDASIM must be set before Numba is first imported. Sizes stay small (the simulator runs
every GPU thread as a Python thread). Prints one line per check and exits non-zero on the first failure."""
import os
import sys
assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
import numpy as np
import torch
import minitorch_nb as mt
from minitorch_nb import ndarray as nd

rng = np.random.default_rng(0)
CHECKS = []

def check(fn):
    CHECKS.append(fn)
    return fn

def close(got, want, rtol=1e-5, atol=1e-6):
    got = got.to_numpy() if isinstance(got, nd.NDArray) else got.detach().to("numpy").numpy()
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

@check
def device_is_simulated():
    assert mt.cuda.is_available() and mt.cuda.is_simulator()
    x = nd.array([1.0, 2.0], device="cuda")
    assert type(x.buffer).__name__ == "FakeCUDAArray" and x.device == "cuda"

@check
def elementwise_on_views_and_broadcasts():
    a = rng.standard_normal((4, 6, 5)).astype(np.float32)
    b = rng.standard_normal((6, 1)).astype(np.float32)
    x, y = nd.array(a, device="cuda"), nd.array(b, device="cuda")
    v, av = x[::-1, 1:, ::2].permute_dims((2, 0, 1)), a[::-1, 1:, ::2].transpose(2, 0, 1)
    xp = x.__array_namespace__()
    close(x + y, a + b)
    close(v * 2.0 - 1.0, av * 2.0 - 1.0)
    close(xp.exp(v), np.exp(av), rtol=1e-6)
    close(xp.log(xp.abs(x) + 1.0), np.log(np.abs(a) + 1.0), rtol=1e-6)
    close(xp.maximum(x, 0.0), np.maximum(a, 0))
    close(x > y, a > b)
    close(xp.where(x > 0, x, y), np.where(a > 0, a, b))
    close(x.astype(np.float64), a.astype(np.float64))
    close(xp.tan(x), np.tan(a), rtol=1e-6)

@check
def every_op_table_row_runs_its_own_kernel():
    """Each row of chapter 05's op table on device "cuda" against numpy (values, dtypes, NaN, inf and signed
    zeros), by the kernel made from the row: float32 results of guarded math pass through float64 and must
    still be numpy's float32 values. A launch of any other kernel for these ops would fail the count."""
    import warnings
    from minitorch_nb.backends import cuda as bc
    special = np.array([0.0, -0.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 100.0, -1000.0, 1.5, -1.0])
    inputs = {np.float32: special.astype(np.float32).reshape(3, 4), np.float64: special.reshape(3, 4),
              np.int64: np.array([[0, 1, -2, 3], [4, -5, 6, 7], [-1, 2, 0, 5]]), np.bool_: special.reshape(3, 4) > 0}
    launched = []
    original = bc.gpu_kernel
    bc.gpu_kernel = lambda name: launched.append(name) or original(name)
    try:
        for name, op in nd.OPS.items():
            for dtype, a in inputs.items():
                b = np.abs(a[::-1]) if name == "power" and a.dtype.kind == "i" else a[::-1]  # numpy: no int ** -n
                x, y = nd.array(a, device="cuda"), nd.array(b, device="cuda")
                xp = x.__array_namespace__()
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        want = (op.ufunc(a) if op.kind == "unary" else op.ufunc(a, b) if op.kind == "binary"
                                else op.ufunc.reduce(a, axis=1))
                    except TypeError:
                        continue  # numpy has no loop for it (bitwise ops of floats): NDArray refuses too
                    got = (getattr(xp, op.api)(x) if op.kind == "unary" else getattr(xp, op.api)(x, y)
                           if op.kind == "binary" else getattr(xp, op.api)(x, axis=1)).to_numpy()
                assert got.dtype == want.dtype, (name, dtype, got.dtype, want.dtype)
                if want.dtype.kind == "f":
                    tol = 1e-6 if want.dtype == np.float32 else 1e-12
                    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=f"{name} {dtype}")
                    zeros = want == 0
                    assert (np.signbit(got[zeros]) == np.signbit(want[zeros])).all(), (name, dtype, got, want)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=f"{name} {dtype}")
    finally:
        bc.gpu_kernel = original
    assert set(launched) == set(nd.OPS), set(nd.OPS) - set(launched)

@check
def reductions():
    a = rng.standard_normal((5, 7, 3)).astype(np.float32)
    a[1, 2, 0] = np.nan
    x = nd.array(a, device="cuda")
    xp = x.__array_namespace__()
    for axis in (None, 0, 1, (0, 2)):
        close(xp.sum(x, axis=axis), np.sum(a, axis=axis), rtol=1e-5, atol=1e-5)
        close(xp.max(x, axis=axis), np.max(a, axis=axis))
    for axis in (0, 1, 2):
        close(xp.argmax(x, axis=axis), np.argmax(a, axis=axis))
        close(xp.argmin(x, axis=axis), np.argmin(a, axis=axis))

@check
def gather_scatter_setitem():
    a = rng.standard_normal((6, 4)).astype(np.float32)
    x = nd.array(a, device="cuda")
    close(x[[5, 0, 0]], a[[5, 0, 0]])
    x[[1, 1, 3]] = nd.array(np.array([7.0], np.float32), device="cuda")
    a[[1, 1, 3]] = 7.0
    close(x, a)
    x[::2, 1:] = 0.5
    a[::2, 1:] = 0.5
    close(x, a)
    acc, acc_np = nd.array(np.zeros(4, np.float32), device="cuda"), np.zeros(4, np.float32)
    np.add.at(acc, np.array([0, 2, 2]), nd.array(np.array([1.0, 2.0, 3.0], np.float32), device="cuda"))
    np.add.at(acc_np, np.array([0, 2, 2]), np.array([1.0, 2.0, 3.0], np.float32))
    close(acc, acc_np)

@check
def matmul_tiled_and_naive():
    for sa, sb in [((33, 17), (17, 20)), ((16, 16), (16, 16)), ((1, 3), (3, 1)), ((2, 5, 4), (4, 3))]:
        a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
        want = (torch.tensor(a) @ torch.tensor(b)).numpy()
        close(nd.array(a, device="cuda") @ nd.array(b, device="cuda"), want, rtol=1e-5, atol=1e-5)  # tiled (2-D)
        close(nd.array(a, device="cuda").mT.compact().mT @ nd.array(b, device="cuda"), want, rtol=1e-5, atol=1e-5)
    a64 = rng.standard_normal((9, 5))
    close(nd.array(a64, device="cuda") @ nd.array(a64.T.copy(), device="cuda"), a64 @ a64.T, rtol=1e-12, atol=1e-12)

@check
def tensor_engine_on_cuda_matches_torch():
    a0, b0 = rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    a, b = mt.tensor(a0, device="cuda", requires_grad=True), mt.tensor(b0, device="cuda", requires_grad=True)
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    loss = mt.log_softmax((a @ b).relu() + 0.1, dim=1).sum() + (a * a).mean()
    tloss = torch.log_softmax((ta @ tb).relu() + 0.1, dim=1).sum() + (ta * ta).mean()
    loss.backward(); tloss.backward()
    assert a.grad.device == "cuda"
    close(loss, tloss.detach().numpy(), rtol=1e-5, atol=1e-5)
    close(a.grad, ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    close(b.grad, tb.grad.numpy(), rtol=1e-5, atol=1e-5)

@check
def transfers_between_devices_carry_gradients():
    w = mt.tensor([1.0, -2.0, 3.0], requires_grad=True)
    on_gpu = w.to("cuda")
    back = (on_gpu * on_gpu).to("cpu").sum()
    back.backward()
    assert w.grad.device == "numpy" and w.grad.tolist() == [2.0, -4.0, 6.0]
    try:
        on_gpu.array + nd.array([1.0, 2.0, 3.0], device="cpu")
    except RuntimeError as e:
        assert "different devices" in str(e)
    else:
        raise AssertionError("mixing devices must fail")

class StreamSpy:
    "Records the stream handed to every kernel launch and host<->device copy while active (the simulator ignores it)."
    def __init__(self):
        from numba import cuda
        from numba.cuda.simulator.kernel import FakeCUDAKernel
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
        self.targets = [(FakeCUDAKernel, "__getitem__", lambda args, kw: args[1][2] if len(args[1]) > 2 else 0, "launch"),
                        (FakeCUDAArray, "copy_to_host", lambda args, kw: kw.get("stream", 0), "to_host"),
                        (FakeCUDAArray, "copy_to_device", lambda args, kw: kw.get("stream", 0), "copy_to_device"),
                        (cuda, "to_device", lambda args, kw: kw.get("stream", 0), "to_device")]
        self.seen = []
    def __enter__(self):
        self.saved = []
        for owner, name, stream_of, label in self.targets:
            original = getattr(owner, name)
            self.saved.append((owner, name, original))
            def spy(*args, _original=original, _stream_of=stream_of, _label=label, **kw):
                self.seen.append((_label, _stream_of(args, kw), getattr(args[0], "dtype", None)))
                return _original(*args, **kw)
            setattr(owner, name, spy)
        return self
    def __exit__(self, *exc):
        for owner, name, original in self.saved: setattr(owner, name, original)

@check
def work_inside_a_stream_block_goes_on_that_stream():
    default = mt.cuda.default_stream()
    assert mt.cuda.current_stream() is default
    s, t = mt.cuda.Stream(), mt.cuda.Stream()
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 4)).astype(np.float32)
    with StreamSpy() as spy:
        with mt.cuda.stream(s) as entered:
            assert entered is s and mt.cuda.current_stream() is s
            x, y = mt.tensor(a, device="cuda"), mt.tensor(b, device="cuda")
            prod = x @ y                                        # tiled matmul kernel
            z = (x * 2.0 - 1.0).exp().sum(dim=1)                # map, zip, reduce kernels
            picked = x[[4, 0, 0]]                               # gather with a positions copy
            with mt.cuda.stream(t):
                assert mt.cuda.current_stream() is t
                w = mt.tensor(a, device="cuda").tanh()
            assert mt.cuda.current_stream() is s
            got = [prod.to("numpy").numpy(), z.to("numpy").numpy(), picked.to("numpy").numpy()]
        assert mt.cuda.current_stream() is default
        after = (mt.tensor(a, device="cuda") + 1.0).to("numpy").numpy()
    np.testing.assert_allclose(got[0], a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], np.exp(a * 2 - 1).sum(1), rtol=1e-5)
    np.testing.assert_array_equal(got[2], a[[4, 0, 0]])
    np.testing.assert_allclose(w.to("numpy").numpy(), np.tanh(a), rtol=1e-6)
    np.testing.assert_allclose(after, a + 1, rtol=1e-6)
    streams = [stream for _, stream, _ in spy.seen]
    labels = {label for label, _, _ in spy.seen}
    assert {"launch", "to_host", "to_device"} <= labels, labels
    # cached shape/stride metadata is copied once on the default stream (0); everything else follows the block
    on_s = [i for i, st in enumerate(streams) if st is s.numba_stream]
    on_t = [i for i, st in enumerate(streams) if st is t.numba_stream]
    assert on_s and on_t and on_t[0] > on_s[0] and on_t[-1] < on_s[-1], (on_s, on_t)
    assert all(st is s.numba_stream or st is t.numba_stream or (label == "to_device" and st == 0 and dt == np.int64)
               for label, st, dt in spy.seen[:on_s[-1] + 1]), spy.seen
    assert all(st == 0 for _, st, _ in spy.seen[on_s[-1] + 1:]), spy.seen[on_s[-1] + 1:]
    data_in = [st for label, st, dt in spy.seen[:on_s[-1] + 1] if label == "to_device" and dt == np.float32]
    # x, y and the scalars 2.0, 1.0 go in on s; the tensor made inside the inner block on t
    assert len(data_in) >= 3 and all(st is s.numba_stream for st in data_in[:-1]) and data_in[-1] is t.numba_stream
    assert sum(label == "launch" for label, _, _ in spy.seen[:on_s[-1] + 1]) >= 6

@check
def current_stream_is_restored_after_an_exception():
    s = mt.cuda.Stream()
    try:
        with mt.cuda.stream(s):
            with mt.cuda.stream(mt.cuda.Stream()):
                raise KeyError("inside")
    except KeyError:
        pass
    assert mt.cuda.current_stream() is mt.cuda.default_stream()
    with mt.cuda.stream(None) as nothing:
        assert nothing is None and mt.cuda.current_stream() is mt.cuda.default_stream()
    try:
        with mt.cuda.stream("side"): pass
    except TypeError as e:
        assert "needs an mt.cuda.Stream" in str(e) and "str" in str(e), e
    else:
        raise AssertionError("a non-stream must be refused")
    s.synchronize()
    assert s.query()
    s.wait_stream(mt.cuda.default_stream())                 # the GPU would wait: the simulator is synchronous
    s.wait_event(mt.cuda.default_stream().record_event())

@check
def events_record_time_and_complain():
    import warnings
    start, end = mt.cuda.Event(enable_timing=True), mt.cuda.Event(enable_timing=True)
    s = mt.cuda.Stream()
    start.record(s)
    with mt.cuda.stream(s):
        x = mt.tensor(np.ones((4, 8), np.float32), device="cuda").sum()
    end.record(s)
    end.synchronize()
    assert end.query() and start.recorded and end.recorded
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0, ms
    assert ms == 0.0 and any("bogus" in str(w.message) for w in caught)  # the simulator keeps no time
    assert x.item() == 32.0
    for bad, words in ((lambda: start.elapsed_time(mt.cuda.Event()), "end event was created without timing"),
                       (lambda: mt.cuda.Event().elapsed_time(end), "start event was created without timing"),
                       (lambda: start.elapsed_time(mt.cuda.Event(enable_timing=True)), "end event was never recorded"),
                       (lambda: mt.cuda.Event(enable_timing=True).elapsed_time(end), "start event was never recorded")):
        try:
            bad()
        except RuntimeError as e:
            assert words in str(e), (words, str(e))
        else:
            raise AssertionError(f"elapsed_time must fail: {words}")
    assert mt.cuda.Event().query()  # never recorded: nothing to wait for, as in CUDA

@check
def pinned_host_memory_copies_in_on_a_stream():
    p = mt.cuda.pinned_empty((4, 8), mt.float32)
    assert p.device == "numpy" and p.shape == (4, 8) and p.dtype == np.float32
    values = rng.standard_normal((4, 8)).astype(np.float32)
    p.array[:] = values
    s = mt.cuda.Stream()
    with mt.cuda.stream(s):
        g = p.to("cuda")
        row_sums = (g * 2.0).sum(dim=1)
    ready = s.record_event()
    ready.synchronize()
    np.testing.assert_allclose(row_sums.to("numpy").numpy(), (values.astype(np.float64) * 2).sum(1), rtol=1e-5, atol=1e-5)
    assert g.device == "cuda"

if __name__ == "__main__":
    for fn in CHECKS:
        fn()
        print("passed", fn.__name__)
    print(f"{len(CHECKS)} simulator checks passed")
