"Chapter 04: DataLoader semantics and workers, random keys and generators, the IDX reader and the datasets."
import gc
import gzip
import hashlib
import multiprocessing
import os
import re
from pathlib import Path

import numpy as np
import pytest
import minitorch_nb as mt
from minitorch_nb.data import DataLoader, Dataset, TensorDataset, read_idx

ROOT = Path(__file__).resolve().parent.parent


class Range(Dataset):
    "Example i is (float vector [i, i], int label i % 3)."
    def __init__(self, n): self.n = n
    def __len__(self): return self.n
    def __getitem__(self, i): return np.full(2, i, np.float32), i % 3


class FailsAt(Dataset):
    def __init__(self, n, bad): self.n, self.bad = n, bad
    def __len__(self): return self.n
    def __getitem__(self, i):
        if i == self.bad: raise KeyError(f"record {i} is corrupt")
        return i


class Dies(Dataset):
    "The worker that loads example 3 exits abruptly (as if killed)."
    def __len__(self): return 8
    def __getitem__(self, i):
        if i == 3 and mt.data.get_worker_info() is not None: os._exit(3)
        return i


def labels(loader): return [b[1].tolist() for b in loader]


# ---------------------------------------------------------------- DataLoader semantics, single process
def test_batching_len_and_drop_last():
    ds = Range(10)
    dl = DataLoader(ds, batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and [len(b[1]) for b in batches] == [4, 4, 2]
    x, y = batches[0]
    assert x.shape == (4, 2) and x.dtype == mt.float32 and y.dtype == mt.int64
    np.testing.assert_array_equal(x.numpy()[:, 0], [0, 1, 2, 3])
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [len(b[1]) for b in dl] == [4, 4]
    assert len(DataLoader(ds, batch_size=5)) == 2 and len(DataLoader(ds, batch_size=3, drop_last=True)) == 3


def test_tensor_dataset_and_collate():
    x, y = mt.tensor(np.arange(12.0).reshape(6, 2)), mt.tensor([0, 1, 2, 0, 1, 2])
    xb, yb = next(iter(DataLoader(TensorDataset(x, y), batch_size=4)))
    np.testing.assert_array_equal(xb.numpy(), np.arange(8.0).reshape(4, 2))
    assert yb.dtype == mt.int64 and yb.tolist() == [0, 1, 2, 0]
    with pytest.raises(ValueError, match=r"\[6, 2\], \[2\]"): TensorDataset(x, mt.tensor([1, 2]))
    b = mt.data.default_collate([{"a": 1.0, "b": True}, {"a": 2.0, "b": False}])
    assert b["a"].dtype == mt.float64 and b["b"].dtype == mt.bool_
    with pytest.raises(RuntimeError, match=r"\(2,\), \(3,\)"): mt.data.default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(TypeError, match="collate_fn"): mt.data.default_collate([object(), object()])


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"): DataLoader(Range(4), batch_size=0)
    with pytest.raises(ValueError, match="num_workers"): DataLoader(Range(4), num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor"): DataLoader(Range(4), prefetch_factor=2)
    with pytest.raises(ValueError, match="sampler"):
        DataLoader(Range(4), shuffle=True, sampler=mt.data.SequentialSampler(Range(4)))


def test_shuffle_is_a_permutation_and_seeded():
    order = lambda seed: sum(labels(DataLoader(Range(30), batch_size=7, shuffle=True,
                                               generator=mt.Generator().manual_seed(seed))), [])
    idx = lambda seed: sum([b[0].numpy()[:, 0].astype(int).tolist() for b in
                            DataLoader(Range(30), batch_size=7, shuffle=True, generator=mt.Generator().manual_seed(seed))], [])
    assert sorted(idx(0)) == list(range(30))
    assert idx(0) == idx(0) and idx(0) != idx(1) and order(3) == order(3)
    g = mt.Generator().manual_seed(5)
    dl = DataLoader(Range(30), batch_size=30, shuffle=True, generator=g)
    e1, e2 = (b[0].numpy()[:, 0].tolist() for b in (next(iter(dl)), next(iter(dl))))
    assert e1 != e2 and sorted(e1) == sorted(e2)          # a new order each epoch
    mt.manual_seed(7); a = idx_global = [b[0].numpy()[:, 0].tolist() for b in DataLoader(Range(12), 12, shuffle=True)]
    mt.manual_seed(7); b = [b[0].numpy()[:, 0].tolist() for b in DataLoader(Range(12), 12, shuffle=True)]
    assert a == b and idx_global


def test_distributed_sampler_shards():
    for n, world in ((10, 3), (12, 4), (7, 2)):
        shards = [list(mt.data.DistributedSampler(range(n), world, r, seed=1)) for r in range(world)]
        assert len({len(s) for s in shards}) == 1 and set(sum(shards, [])) == set(range(n))
        if n % world == 0: assert sorted(sum(shards, [])) == list(range(n))
    s = mt.data.DistributedSampler(range(12), 4, 1)
    first = list(s); s.set_epoch(1)
    assert list(s) != first
    with pytest.raises(ValueError, match="rank"): mt.data.DistributedSampler(range(4), 2, 2)


# ---------------------------------------------------------------- worker processes
@pytest.mark.parametrize("shuffle", [False, True])
def test_same_order_whatever_num_workers(shuffle):
    def run(w):
        dl = DataLoader(Range(23), batch_size=3, shuffle=shuffle, num_workers=w,
                        generator=mt.Generator().manual_seed(11))
        return [b[0].numpy()[:, 0].astype(int).tolist() for b in dl]
    ref = run(0)
    assert run(2) == ref and run(3) == ref
    assert sorted(sum(ref, [])) == list(range(23))
    assert multiprocessing.active_children() == []


def test_same_order_with_global_generator():
    def run(w):
        mt.manual_seed(3)
        return [b[1].tolist() for b in DataLoader(Range(10), 4, shuffle=True, num_workers=w)]
    assert run(0) == run(2)


def test_worker_exception_reraised_with_traceback():
    with pytest.raises(KeyError) as info:
        list(DataLoader(FailsAt(10, bad=7), batch_size=2, num_workers=2))
    msg = str(info.value)
    assert "Caught KeyError in DataLoader worker process 1" in msg    # batch 3 = [6, 7] -> worker 3 % 2
    assert "record 7 is corrupt" in msg and "Traceback (most recent call last)" in msg
    assert 'raise KeyError(f"record {i} is corrupt")' in msg and "test_data.py" in msg
    assert multiprocessing.active_children() == []


def test_worker_exception_of_an_unpicklable_type():
    class Local(Exception): pass       # a local class can't be pickled: a RuntimeError carries the text

    class Bad(Dataset):
        def __len__(self): return 4
        def __getitem__(self, i): raise Local("local failure")
    with pytest.raises(RuntimeError, match="(?s)Caught Local.*local failure"):
        list(DataLoader(Bad(), batch_size=2, num_workers=2))
    assert multiprocessing.active_children() == []


def test_earlier_batches_arrive_before_the_error():
    got = []
    with pytest.raises(KeyError):
        for b in DataLoader(FailsAt(10, bad=7), batch_size=2, num_workers=2): got.append(b.tolist())
    assert got == [[0, 1], [2, 3], [4, 5]]


def _reaped(pids):
    "True when none of the pids exists any more, not even as a zombie."
    for pid in pids:
        try: os.kill(pid, 0)
        except ProcessLookupError: continue
        return False
    return True


def test_clean_shutdown_no_zombies():
    dl = DataLoader(Range(20), batch_size=2, num_workers=2)
    it = iter(dl)                       # exhausted
    pids = [w.pid for w in it._workers]
    assert len(multiprocessing.active_children()) == 2
    assert len(list(it)) == 10
    assert multiprocessing.active_children() == [] and _reaped(pids)

    it = iter(dl)                       # abandoned after one batch, then garbage-collected
    pids = [w.pid for w in it._workers]
    next(it)
    del it; gc.collect()
    assert multiprocessing.active_children() == [] and _reaped(pids)

    it = iter(DataLoader(FailsAt(10, bad=1), batch_size=2, num_workers=2))   # error
    pids = [w.pid for w in it._workers]
    with pytest.raises(KeyError): next(it)
    assert multiprocessing.active_children() == [] and _reaped(pids)
    with pytest.raises(StopIteration): next(it)   # a failed iterator stays finished


def test_dead_worker_is_reported():
    with pytest.raises(RuntimeError, match="exited unexpectedly with exit code 3"):
        list(DataLoader(Dies(), batch_size=2, num_workers=2))
    assert multiprocessing.active_children() == []


def test_workers_are_seeded_differently_and_reproducibly():
    class Noisy(Dataset):
        def __len__(self): return 8
        def __getitem__(self, i): return float(mt.rand(1).item()), float(np.random.random())
    run = lambda: [(a.tolist(), b.tolist()) for a, b in
                   DataLoader(Noisy(), batch_size=2, num_workers=2, generator=mt.Generator().manual_seed(0))]
    r1, r2 = run(), run()
    assert r1 == r2
    assert r1[0][0] != r1[1][0] and r1[0][1] != r1[1][1]       # worker 0 and worker 1 draw different numbers


def test_custom_collate_and_prefetch():
    dl = DataLoader(Range(9), batch_size=3, num_workers=2, prefetch_factor=1, collate_fn=lambda s: [y for _, y in s])
    assert list(dl) == [[0, 1, 2], [0, 1, 2], [0, 1, 2]]


# ---------------------------------------------------------------- randomness
def test_keys_are_pure_and_split_keys_differ():
    k = mt.random.key(42)
    np.testing.assert_array_equal(mt.random.normal(k, (5, 3)).numpy(), mt.random.normal(mt.random.key(42), (5, 3)).numpy())
    np.testing.assert_array_equal(mt.random.uniform(k, 7).numpy(), mt.random.uniform(k, 7).numpy())
    a, b = mt.random.split(k)
    assert len({k, a, b}) == 3 and mt.random.split(k) == (a, b) and len(mt.random.split(k, 5)) == 5
    assert not np.any(mt.random.normal(a, 100).numpy() == mt.random.normal(b, 100).numpy())
    assert mt.random.fold_in(k, 1) == mt.random.fold_in(k, 1) != mt.random.fold_in(k, 2)
    # element i depends only on (key, i): the reused-key bug of S1:7118-7122
    w, bias = mt.random.normal(k, (10, 1)), mt.random.normal(k, (1,))
    assert bias.item() == w.numpy().ravel()[0]
    # split keys are not correlated
    ka, kb = mt.random.split(mt.random.key(0))
    r = np.corrcoef(mt.random.normal(ka, 50_000).numpy(), mt.random.normal(kb, 50_000).numpy())[0, 1]
    assert abs(r) < 5 / np.sqrt(50_000)


def test_key_draws_have_the_right_distribution():
    stats = pytest.importorskip("scipy.stats")
    z = mt.random.normal(mt.random.key(3), 20_000, dtype=mt.float64).numpy()
    u = mt.random.uniform(mt.random.key(4), 20_000, minval=-2.0, maxval=3.0).numpy()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert stats.kstest(u, "uniform", args=(-2, 5)).pvalue > 1e-3
    assert u.dtype == np.float32 and u.min() >= -2 and u.max() < 3
    p = mt.random.permutation(mt.random.key(0), 50).numpy()
    assert sorted(p.tolist()) == list(range(50)) and p.dtype == np.int64


def test_key_errors():
    with pytest.raises(TypeError, match="expected a Key"): mt.random.normal(3, 2)
    with pytest.raises(ValueError, match="minval < maxval"): mt.random.uniform(mt.random.key(0), 2, minval=1, maxval=0)
    with pytest.raises(TypeError, match="float32 or float64"): mt.random.normal(mt.random.key(0), 2, dtype=mt.int64)
    with pytest.raises(ValueError, match="out of range"): mt.random.key(2**64)


def test_generator_matches_global_seed_and_state_roundtrip():
    mt.manual_seed(123)
    a = mt.randn(4).numpy()
    g = mt.Generator().manual_seed(123)
    np.testing.assert_array_equal(mt.randn(4, generator=g).numpy(), a)
    state = mt.get_rng_state()
    assert state.dtype == np.uint8 and state.shape == (48,)
    x = mt.rand(5).numpy(); mt.randn(50)
    mt.set_rng_state(state)
    np.testing.assert_array_equal(mt.rand(5).numpy(), x)
    gs = g.get_state(); y = g.random(3)
    np.testing.assert_array_equal(g.set_state(gs).random(3), y)
    with pytest.raises(ValueError, match="48 bytes"): g.set_state(mt.tensor([1, 2]))
    # seeding the default generator through mt.random seeds what chapter 01 draws from
    mt.random.default_generator.manual_seed(9); v = mt.rand(3).numpy()
    mt.manual_seed(9)
    np.testing.assert_array_equal(mt.rand(3).numpy(), v)
    assert mt.Generator().manual_seed(-1).random() == mt.Generator().manual_seed(2**64 - 1).random()


# ---------------------------------------------------------------- IDX files and datasets
def test_shipped_files_match_their_checksums():
    readme = (ROOT / "data" / "README.md").read_text()
    shipped = r"`((?:mnist|fashion_mnist)/[^`]+\.gz|tinyshakespeare/input\.txt)` \| [\d,]+ \| `([0-9a-f]{64})`"
    for path, digest in re.findall(shipped, readme):
        assert hashlib.sha256((ROOT / "data" / path).read_bytes()).hexdigest() == digest, path
    assert len(re.findall(r"\.gz` \|", readme)) == 4 and "`tinyshakespeare/input.txt` |" in readme
    assert hashlib.sha256((ROOT / "data" / "tinyshakespeare" / "input.txt").read_bytes()).hexdigest() == (
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed")


def test_mnist_files():
    images, labels = mt.data.load_mnist("mnist")
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8 and labels.dtype == np.int64
    assert np.bincount(labels).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    with gzip.open(ROOT / "data/mnist/t10k-images-idx3-ubyte.gz") as f:   # the recipe of data/README.md
        ref = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    np.testing.assert_array_equal(images, ref)
    f_images, f_labels = mt.data.load_mnist("fashion")
    assert f_images.shape == (10000, 28, 28) and np.bincount(f_labels).tolist() == [1000] * 10
    with pytest.raises(ValueError, match="kind"): mt.data.load_mnist("kmnist")


def _idx(magic, dims, payload):
    return magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in dims) + payload


def test_idx_reader_on_crafted_files(tmp_path):
    good = tmp_path / "good-idx3.gz"
    good.write_bytes(gzip.compress(_idx(2051, (3, 2, 2), bytes(range(12)))))
    np.testing.assert_array_equal(read_idx(good), np.arange(12, dtype=np.uint8).reshape(3, 2, 2))
    raw = tmp_path / "int32.idx"                      # not gzipped, big-endian int32 values
    raw.write_bytes(_idx(0x0C01, (3,), np.array([1, -2, 300], ">i4").tobytes()))
    np.testing.assert_array_equal(read_idx(raw), [1, -2, 300])

    with pytest.raises(ValueError, match=r"good-idx3\.gz: magic number 2051 .*expected 2049"):
        read_idx(good, expected_magic=2049)
    short = tmp_path / "short.gz"
    short.write_bytes(gzip.compress(_idx(2051, (3, 2, 2), bytes(7))))
    with pytest.raises(ValueError, match=r"short\.gz: truncated.*\(3, 2, 2\).*12 bytes.*holds 7"): read_idx(short)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(_idx(2051, (100, 28, 28), bytes(78400)))[:-40])
    with pytest.raises(ValueError, match=r"cut\.gz: the gzip stream is truncated"): read_idx(cut)
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"PK\x03\x04 not an idx file")
    with pytest.raises(ValueError, match=r"junk\.bin: not an IDX file"): read_idx(junk)
    tiny = tmp_path / "tiny"
    tiny.write_bytes(b"\0\0")
    with pytest.raises(ValueError, match="too short"): read_idx(tiny)


def test_load_mnist_names_the_bad_file(tmp_path):
    folder = tmp_path / "mnist"
    folder.mkdir()
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx(2049, (2,), bytes(2))))   # labels, not images
    (folder / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(_idx(2049, (2,), bytes(2))))
    with pytest.raises(ValueError, match=r"t10k-images-idx3-ubyte\.gz: magic number 2049.*expected 2051"):
        mt.data.load_mnist("mnist", root=tmp_path)
    with pytest.raises(FileNotFoundError, match="fashion files not found"):
        mt.data.load_mnist("fashion", root=tmp_path)


def test_mnist_dataset_split():
    train, valid = mt.data.MNIST(train=True), mt.data.MNIST(train=False)
    assert (len(train), len(valid)) == (8000, 2000)
    images, labels = mt.data.load_mnist()
    # the two parts are disjoint and together are the whole official test set
    key = lambda ims: {im.tobytes() for im in ims}
    assert len(key(train.images) | key(valid.images)) == len(key(images))
    assert not key(train.images[:500]) & key(valid.images)
    assert np.array_equal(np.bincount(np.r_[train.labels, valid.labels]), np.bincount(labels))
    assert np.array_equal(mt.data.MNIST(train=False).labels, valid.labels)
    x, y = valid[0]
    assert x.shape == (28, 28) and x.dtype == np.float32 and 0 <= x.min() <= x.max() <= 1 and isinstance(y, int)
    xb, yb = next(iter(DataLoader(valid, batch_size=16)))
    assert xb.shape == (16, 28, 28) and yb.dtype == mt.int64
    with pytest.raises(ValueError, match="n_train"): mt.data.MNIST(n_train=10000)


def test_digits():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_digits
    tr, va = mt.data.Digits(train=True), mt.data.Digits(train=False)
    assert (len(tr), len(va)) == (1437, 360)
    ref = load_digits()
    np.testing.assert_array_equal(np.sort(np.r_[tr.labels, va.labels]), np.sort(ref.target))
    x, y = tr[0]
    assert x.shape == (8, 8) and x.max() <= 1 and x.dtype == np.float32
