"Chapter 12 (GANs): the losses, the DCGAN players and one round of the game against PyTorch; the toy data and the score."
import math
import numpy as np
import pytest
import torch
import minitorch_nb as mt
from minitorch_nb import gan, nn
from oracle import assert_close, pair, to_numpy

TOL64 = dict(rtol=1e-9, atol=1e-11)

# ---------------------------------------------------------------- losses

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_generator_and_discriminator_losses_match_torch(device, rng, dtype):
    a, b = rng.standard_normal((16, 1)).astype(dtype) * 4, rng.standard_normal((16, 1)).astype(dtype) * 4
    fake, tfake = pair(a, device=device)
    real, treal = pair(b, device=device)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    want = {"non_saturating": lambda: bce(tfake, torch.ones_like(tfake)),
            "minimax": lambda: torch.log1p(-torch.sigmoid(tfake)).mean()}  # log(1 - D(G(z))), written out
    for kind, ref in want.items():
        fake.grad, tfake.grad = None, None
        ours, theirs = gan.generator_loss(fake, kind), ref()
        ours.backward(); theirs.backward()
        tol = TOL64 if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)
        assert_close(ours, theirs, **tol); assert_close(fake.grad, tfake.grad, **tol)
    ours = gan.discriminator_loss(real, fake)
    theirs = bce(treal, torch.ones_like(treal)) + bce(tfake, torch.zeros_like(tfake))
    assert_close(ours, theirs, **(TOL64 if dtype == np.float64 else dict(rtol=1e-5, atol=1e-6)))

def test_generator_loss_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="non_saturating"):
        gan.generator_loss(mt.zeros(3, 1), "wasserstein")

def test_minimax_gradient_saturates_and_non_saturating_does_not():
    logits = mt.tensor([-6.0, 0.0, 6.0], dtype=mt.float64, requires_grad=True)
    for kind, want in (("minimax", lambda d: -d), ("non_saturating", lambda d: d - 1)):
        logits.grad = None
        gan.generator_loss(logits, kind).backward()
        d = 1 / (1 + np.exp(-np.array([-6.0, 0.0, 6.0])))
        np.testing.assert_allclose(logits.grad.numpy() * 3, want(d), rtol=1e-12)

# ---------------------------------------------------------------- the DCGAN players against torch

def torch_generator(latent, width):
    tn = torch.nn
    return tn.Sequential(
        tn.ConvTranspose2d(latent, 4 * width, 7, 1, 0, bias=False), tn.BatchNorm2d(4 * width), tn.ReLU(),
        tn.ConvTranspose2d(4 * width, 2 * width, 4, 2, 1, bias=False), tn.BatchNorm2d(2 * width), tn.ReLU(),
        tn.ConvTranspose2d(2 * width, 1, 4, 2, 1), tn.Tanh())

def torch_discriminator(width):
    tn = torch.nn
    return tn.Sequential(
        tn.Conv2d(1, 2 * width, 4, 2, 1), tn.LeakyReLU(0.2),
        tn.Conv2d(2 * width, 4 * width, 4, 2, 1, bias=False), tn.BatchNorm2d(4 * width), tn.LeakyReLU(0.2),
        tn.Conv2d(4 * width, 1, 7, 1, 0), tn.Flatten())

def copy_to_torch(ours, theirs):
    "Load our module's state (parameters and buffers) into the torch module, in float64."
    theirs.double().load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    return theirs

def players(device, latent=8, width=4):
    "Our initialized float64 generator and discriminator on `device` and torch copies of them."
    mt.manual_seed(0)
    G, D = gan.dcgan_generator(latent, width).double(), gan.dcgan_discriminator(width).double()
    for net in (G, D): net.apply(gan.dcgan_init)
    tG, tD = copy_to_torch(G, torch_generator(latent, width)), copy_to_torch(D, torch_discriminator(width))
    return G.to(device), D.to(device), tG, tD

def test_dcgan_players_have_torch_names_shapes_and_outputs(device, rng):
    G, D, tG, tD = players(device)
    assert [k for k, _ in G.state_dict().items()] == list(tG.state_dict())
    assert [k for k, _ in D.state_dict().items()] == list(tD.state_dict())
    z, tz = pair(rng.standard_normal((5, 8, 1, 1)), device=device)
    x, tx = G(z), tG(tz)
    assert tuple(x.shape) == (5, 1, 28, 28)
    assert_close(x, tx, **TOL64)
    assert_close(D(x), tD(tx), **TOL64)

def test_dcgan_init_draws_the_dcgan_distributions():
    mt.manual_seed(1)
    G, D = gan.dcgan_generator(64, 32), gan.dcgan_discriminator(32)
    for net in (G, D): net.apply(gan.dcgan_init)
    for m in list(G.modules()) + list(D.modules()):
        if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
            w = to_numpy(m.weight)
            if w.size > 1000: assert abs(w.mean()) < 2e-3 and abs(w.std() - 0.02) < 1e-3
            if m.bias is not None: assert (to_numpy(m.bias) == 0).all()
        elif isinstance(m, nn.BatchNorm2d):
            assert abs(to_numpy(m.weight).mean() - 1) < 0.01 and abs(to_numpy(m.weight).std() - 0.02) < 0.01
            assert (to_numpy(m.bias) == 0).all()

def test_gan_step_matches_the_same_round_in_torch(device, rng):
    "D on real and fake.detach(), then G through the updated D, with Adam(2e-4, (0.5, 0.999)): every parameter and buffer after two rounds."
    G, D, tG, tD = players(device)
    opt = lambda params, T: T.Adam(params, lr=2e-4, betas=(0.5, 0.999))
    opt_g, opt_d, topt_g, topt_d = opt(G.parameters(), mt.optim), opt(D.parameters(), mt.optim), \
        opt(tG.parameters(), torch.optim), opt(tD.parameters(), torch.optim)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    for _ in range(2):
        real_np, z_np = rng.uniform(-1, 1, (6, 1, 28, 28)), rng.standard_normal((6, 8, 1, 1))
        out = gan.gan_step(G, D, opt_g, opt_d, mt.tensor(real_np, device=device), mt.tensor(z_np, device=device))
        tfake = tG(torch.tensor(z_np))
        real_logits, fake_logits = tD(torch.tensor(real_np)), tD(tfake.detach())
        d_loss = bce(real_logits, torch.ones_like(real_logits)) + bce(fake_logits, torch.zeros_like(fake_logits))
        topt_d.zero_grad(); d_loss.backward(); topt_d.step()
        g_logits = tD(tfake)
        g_loss = bce(g_logits, torch.ones_like(g_logits))
        topt_g.zero_grad(); g_loss.backward(); topt_g.step()
        np.testing.assert_allclose([out["d_loss"], out["g_loss"], out["d_real"], out["d_fake"]],
                                   [d_loss.item(), g_loss.item(), torch.sigmoid(real_logits).mean().item(),
                                    torch.sigmoid(fake_logits).mean().item()], rtol=1e-9)
    for ours, theirs in ((G, tG), (D, tD)):
        for (name, v), (tname, tv) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            assert name == tname
            assert_close(v, tv, **TOL64) if tv.dtype.is_floating_point else np.testing.assert_array_equal(to_numpy(v), to_numpy(tv))

def test_without_detach_the_d_step_reaches_g_and_frees_its_graph(device, rng):
    G, D, _, _ = players(device)
    opt_g, opt_d = mt.optim.Adam(G.parameters()), mt.optim.Adam(D.parameters())
    real, z = mt.tensor(rng.uniform(-1, 1, (4, 1, 28, 28)), device=device), mt.tensor(rng.standard_normal((4, 8, 1, 1)), device=device)
    fake = G(z)
    gan.d_step(D, opt_d, real, fake.detach())
    assert all(p.grad is None for p in G.parameters())
    gan.g_step(D, opt_g, fake)  # the graph is intact
    fake = G(z)
    opt_g.zero_grad()
    gan.d_step(D, opt_d, real, fake)
    assert all(p.grad is not None and np.abs(to_numpy(p.grad)).sum() > 0 for p in G.parameters())
    with pytest.raises(RuntimeError, match="second time"):  # torch raises RuntimeError here too
        gan.g_step(D, opt_g, fake)
    fake = G(z)
    gan.d_step(D, opt_d, real, fake, retain_graph=True)
    gan.g_step(D, opt_g, fake)

def test_train_dcgan_records_every_round_and_one_grid_per_epoch(rng):
    mt.manual_seed(0)
    G, D = gan.dcgan_generator(8, 2), gan.dcgan_discriminator(2)
    opt_g, opt_d = mt.optim.Adam(G.parameters(), lr=2e-4), mt.optim.Adam(D.parameters(), lr=2e-4)
    images = rng.uniform(-1, 1, (10, 1, 28, 28)).astype(np.float32)
    history, grids = gan.train_dcgan(G, D, opt_g, opt_d, images, epochs=2, batch_size=4, z_fixed=mt.randn(3, 8, 1, 1),
                                     device="numpy")
    assert len(history) == 4 and set(history[0]) == {"d_loss", "g_loss", "d_real", "d_fake"}
    assert len(grids) == 2 and grids[0].shape == (3, 1, 28, 28) and G.training

# ---------------------------------------------------------------- toy data, score, grid, slerp

def test_ring_of_gaussians_has_eight_equal_modes_of_the_given_std():
    pts = gan.ring_of_gaussians(80000, std=0.05, generator=np.random.default_rng(0))
    assert pts.shape == (80000, 2) and pts.dtype == np.float32
    centers = gan.ring_centers()
    np.testing.assert_allclose(np.linalg.norm(centers, axis=1), 2.0)
    nearest = np.linalg.norm(pts[:, None] - centers[None], axis=2).argmin(1)
    np.testing.assert_allclose(np.bincount(nearest, minlength=8) / len(pts), np.full(8, 1 / 8), atol=0.005)
    np.testing.assert_allclose((pts - centers[nearest]).std(0), [0.05, 0.05], rtol=0.02)
    assert gan.mode_coverage(gan.ring_of_gaussians(1000, generator=np.random.default_rng(1)))[0] == 8
    assert gan.mode_coverage(np.tile(centers[2], (100, 1)).astype(np.float32)) == (1, 1.0)

def test_classifier_score():
    probs = np.full((20, 10), 0.05); probs[np.arange(20), np.arange(20) % 10] = 0.55
    s = gan.classifier_score(probs)
    assert math.isclose(s["confidence"], 0.55) and s["classes"] == 10
    assert math.isclose(s["entropy"], math.log(10), rel_tol=1e-12)
    probs[:, :] = 0; probs[:15, 2] = 1; probs[15:, 7] = 1
    s = gan.classifier_score(probs)
    assert s["classes"] == 2 and math.isclose(s["entropy"], -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert gan.classifier_score(np.eye(10)[[4, 4]])["entropy"] == 0.0

def test_slerp_keeps_the_norm_and_ends_at_the_codes():
    a, b = np.zeros((3, 1, 1)), np.zeros((3, 1, 1)); a[0], b[1] = 2.0, 2.0
    path = gan.slerp(a, b, np.linspace(0, 1, 5))
    assert path.shape == (5, 3, 1, 1)
    np.testing.assert_allclose(path[0], a, atol=1e-12); np.testing.assert_allclose(path[-1], b, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(path.reshape(5, -1), axis=1), 2.0)
    np.testing.assert_allclose(path[2].ravel(), [math.sqrt(2), math.sqrt(2), 0])

def test_image_grid_places_images_row_by_row():
    images = np.stack([np.full((1, 2, 3), i, np.float32) for i in range(5)])
    grid = gan.image_grid(images, rows=2, pad=1)
    assert grid.shape == (2 * 3 - 1, 3 * 4 - 1)
    assert (grid[0:2, 4:7] == 1).all() and (grid[3:5, 0:3] == 3).all() and (grid[3:5, 8:11] == -1).all()
    assert (grid[2] == -1).all()
