"Chapter 11b (byte-level BPE, the GPT model, the KV cache): round trips, merges, and cache against recompute."
import math
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import minitorch_nb as mt
from minitorch_nb import gpt

CORPUS = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
          "First Citizen:\nYou are all resolved rather to die than to famish?\n") * 3

@pytest.fixture(scope="module")
def tok():
    "A tokenizer with 60 merges learned from a small corpus."
    return gpt.BPETokenizer.train(CORPUS, 316)

@settings(max_examples=300)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_round_trip_any_string(tok, s):
    "decode(encode(s)) == s for every string, whatever characters it holds."
    assert tok.decode(tok.encode(s)) == s
    assert "".join(gpt.chunks(s)) == s

@settings(max_examples=100)
@given(st.text(max_size=40))
def test_round_trip_with_surrogates(tok, s):
    "Strings hypothesis draws from all of Unicode, lone surrogates included, come back too."
    assert tok.decode(tok.encode(s)) == s

def test_round_trip_many_random_strings(tok):
    "Random strings of printable ASCII, Latin-1, CJK and emoji code points."
    rng = np.random.default_rng(0)
    points = np.concatenate([np.arange(32, 127), np.arange(160, 400), np.arange(0x4E00, 0x4F00),
                             np.arange(0x1F600, 0x1F650), [9, 10, 13]])
    for _ in range(500):
        s = "".join(map(chr, rng.choice(points, rng.integers(0, 50))))
        assert tok.decode(tok.encode(s)) == s

def test_merges_are_the_most_frequent_pairs():
    "The first merge is the most frequent adjacent byte pair inside chunks; counts by brute force."
    text = "aaab aab ab ab ba"
    merges = gpt.train_bpe(text, 3)
    counts = {}
    for c in gpt.chunks(text):
        b = c.encode()
        for p in zip(b, b[1:]): counts[p] = counts.get(p, 0) + 1
    best = max(counts.values())
    first = next(iter(merges))
    assert counts[first] == best and list(merges.values()) == [256, 257, 258]

def test_merges_match_brute_force_training():
    "The incremental pair counts give the same merges as recounting everything after each merge."
    text = CORPUS[:400]
    words = [list(c.encode()) for c in gpt.chunks(text)]
    merges = {}
    for new in range(256, 296):
        counts = {}
        for w in words:
            for p in zip(w, w[1:]): counts[p] = counts.get(p, 0) + 1
        if not counts: break
        best = max(counts, key=lambda p: (counts[p], -p[0], -p[1]))
        merges[best] = new
        words = [gpt.merge_pair(w, best, new) for w in words]
    assert gpt.train_bpe(text, 40) == merges

def test_tokenizer_compresses_and_vocab(tok):
    "More merges, fewer tokens; the vocabulary is the bytes plus one token per merge."
    assert len(tok) == 316 and tok.vocab[ord("a")] == b"a"
    assert len(tok.encode(CORPUS)) < 0.5 * len(CORPUS.encode())
    with pytest.raises(ValueError, match="at least 256"): gpt.BPETokenizer.train(CORPUS, 100)

def test_merge_pair():
    assert gpt.merge_pair([1, 2, 2, 2, 1, 2], (1, 2), 9) == [9, 2, 2, 9]
    assert gpt.merge_pair([2, 2, 2], (2, 2), 7) == [7, 2]

# ---------------------------------------------------------------- the model and the KV cache

@pytest.fixture
def model(device):
    mt.manual_seed(0)
    return gpt.GPT(50, block_size=24, d_model=16, n_layer=2, n_head=2).double().to(device)

def test_gpt_is_causal(model, device):
    "Changing token t changes no logit before position t (checked through the outputs)."
    ids = np.random.default_rng(0).integers(0, 50, (2, 12))
    with mt.no_grad():
        base = model(mt.tensor(ids, device=device)).numpy()
        ids[:, 7] = (ids[:, 7] + 1) % 50
        moved = model(mt.tensor(ids, device=device)).numpy()
    diff = np.abs(moved - base).max(-1)
    assert diff[:, :7].max() == 0 and diff[:, 7:].min() > 0

@pytest.mark.parametrize("first", [1, 4])
def test_kv_cache_equals_recompute(model, device, first):
    "Feeding tokens through the cache (a prefix of `first`, then one at a time) gives the full logits."
    ids = np.random.default_rng(1).integers(0, 50, (3, 15))
    with mt.no_grad():
        full = model(mt.tensor(ids, device=device)).numpy()
        caches = model.new_caches()
        parts = [model(mt.tensor(ids[:, :first], device=device), caches)]
        parts += [model(mt.tensor(ids[:, t:t + 1], device=device), caches) for t in range(first, 15)]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, rtol=1e-10, atol=1e-12)
    assert caches[1]["v"].shape == (3, 2, 15, 8)

def test_kv_cache_in_chunks(model, device):
    "Several tokens at a time after a prefix need the shifted causal mask."
    ids = np.random.default_rng(2).integers(0, 50, (2, 16))
    with mt.no_grad():
        full = model(mt.tensor(ids, device=device)).numpy()
        caches = model.new_caches()
        parts = [model(mt.tensor(ids[:, a:b], device=device), caches) for a, b in ((0, 5), (5, 11), (11, 16))]
    np.testing.assert_allclose(np.concatenate([p.numpy() for p in parts], 1), full, rtol=1e-10, atol=1e-12)

def test_generate_same_with_and_without_cache(model):
    "Greedy and sampled generation produce the same tokens either way; bad lengths raise."
    prompt = np.random.default_rng(3).integers(0, 50, (2, 4))
    for temperature in (0, 0.8):
        a = gpt.generate(model, prompt, 10, temperature, seed=5, use_cache=True)
        b = gpt.generate(model, prompt, 10, temperature, seed=5, use_cache=False)
        assert a.shape == (2, 14) and np.array_equal(a, b) and np.array_equal(a[:, :4], prompt)
    with pytest.raises(ValueError, match="block_size"): gpt.generate(model, prompt, 30)

def test_next_token_distribution():
    "Sampling follows softmax(logits / T); T=0 is the argmax."
    logits = mt.tensor(np.array([[0.0, math.log(3.0), -50.0]]))
    rng = np.random.default_rng(0)
    draws = np.array([gpt.next_token(logits, 1.0, rng)[0] for _ in range(4000)])
    assert abs((draws == 1).mean() - 0.75) < 0.03 and (draws == 2).sum() == 0
    assert gpt.next_token(logits, 0, rng)[0] == 1

def test_nats_per_char_counts_characters():
    "An untrained model (near-uniform logits) costs about ln(V) per token, divided by characters per token."
    mt.manual_seed(0)
    tok = gpt.BPETokenizer.train(CORPUS, 300)
    ids = tok.encode(CORPUS)
    m = gpt.GPT(len(tok), block_size=8, d_model=16, n_layer=1, n_head=2)
    n = (len(ids) - 1) // 8 * 8
    chars = len(tok.decode(ids[1:n + 1]))
    expected = n * math.log(len(tok)) / chars
    assert abs(gpt.nats_per_char(m, ids, tok) / expected - 1) < 0.02

def test_gpt_parameter_gradients_flow(device):
    "One training step changes every parameter (the loss reaches all of them)."
    mt.manual_seed(0)
    m = gpt.GPT(40, block_size=8, d_model=16, n_layer=1, n_head=2).to(device)
    x = mt.tensor(np.random.default_rng(0).integers(0, 40, (4, 8)), device=device)
    loss = gpt.lm_loss(m, x, x)
    loss.backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name
