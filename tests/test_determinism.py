"""Tests of snippets/determinism.py: reproducibility checked by rerunning, global state
checked before and after."""

import math
import random
import warnings

import numpy as np
import pytest
import torch
import torch.utils.deterministic
from torch.utils.data import DataLoader, Dataset

from snippets.determinism import (deterministic_algorithms, loader_generator, run_twice,
                                  seed_everything, seed_worker)


def state():
    return (random.getstate(), np.random.get_state()[1].tolist(), torch.get_rng_state().tolist(),
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.utils.deterministic.fill_uninitialized_memory)


def train():
    model = torch.nn.Linear(4, 1)  # init uses torch's RNG
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4) + np.random.randn() + random.random()  # all three RNGs matter
    for _ in range(3):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return [p.detach() for p in model.parameters()]


def test_seed_everything_repeats_all_three_streams():
    seed_everything(3)
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    seed_everything(3)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == a


def test_run_twice_is_zero_for_a_seeded_run_and_leaves_state():
    before = state()
    assert run_twice(train, 0) == 0.0
    assert state() == before


def test_run_twice_sees_an_unseeded_source():
    counter = iter(range(10))

    def leaky():  # depends on something no seed controls
        return [torch.full((2,), float(next(counter)))]

    assert run_twice(leaky, 0) == 1.0


def test_run_twice_compares_infinities_nans_and_empty_tensors_as_values():
    # an overflow that both runs reach is a repeat, not a difference (inf - inf would be NaN)
    assert run_twice(lambda: [torch.tensor([float("inf"), -float("inf"), 1.0])], 0) == 0.0
    assert math.isnan(run_twice(lambda: [torch.tensor([float("nan")])], 0))
    assert run_twice(lambda: [torch.empty(0), torch.ones(2)], 0) == 0.0
    assert run_twice(lambda: [torch.tensor([float("inf"), torch.rand(()).item()])], 0) == 0.0


def test_run_twice_sees_a_difference_in_an_imaginary_part_and_past_float64s_integers():
    """Two runs that differ only where float64 cannot see it: the imaginary part (a cast to
    float64 drops it) and int64 values past 2**53 (they round to one float64)."""
    calls = iter(range(10))
    complex_runs = lambda: [torch.tensor([1 + 1j * next(calls)])]
    assert run_twice(complex_runs, 0) == 1.0
    big = iter([2 ** 53, 2 ** 53 + 1])
    assert run_twice(lambda: [torch.tensor([next(big)])], 0) > 0.0
    assert run_twice(lambda: [torch.tensor([2 ** 53 + 1])], 0) == 0.0


def test_run_twice_checks_its_input():
    with pytest.raises(TypeError, match="no arguments"):
        run_twice(3, 0)
    with pytest.raises(TypeError, match="its element 0 is a float: return torch.tensor"):
        run_twice(lambda: [1.0], 0)                   # a number, not a tensor
    with pytest.raises(TypeError, match="list of tensors, e.g. .*; got NoneType"):
        run_twice(lambda: None, 0)                    # a train() that forgot its return
    assert run_twice(lambda: torch.ones(3), 0) == 0.0  # one tensor: compared whole
    with pytest.raises(ValueError, match="2\\*\\*32"):
        seed_everything(-1)


def test_deterministic_algorithms_restores_flags_even_on_error():
    before = state()
    with pytest.raises(RuntimeError, match="put_ does not have a deterministic implementation"):
        with deterministic_algorithms():
            assert torch.are_deterministic_algorithms_enabled()
            torch.zeros(3).put_(torch.tensor([0]), torch.tensor([1.0]))
    assert state() == before
    with deterministic_algorithms(warn_only=True):
        with pytest.warns(UserWarning, match="put_"):
            torch.zeros(3).put_(torch.tensor([0]), torch.tensor([1.0]))
        assert torch.empty(4).isnan().all()
    assert state() == before


class Noisy(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.tensor([i, torch.randint(1000, ()).item(), np.random.randint(1000), random.randint(0, 999)])


def load(seed, workers):
    dl = DataLoader(Noisy(), batch_size=2, shuffle=True, num_workers=workers,
                    worker_init_fn=seed_worker, generator=loader_generator(seed))
    return torch.cat(list(dl))


def test_loader_with_workers_repeats_with_the_generator():
    assert torch.equal(load(0, 2), load(0, 2))
    assert not torch.equal(load(0, 2), load(1, 2))


@pytest.mark.parametrize("bad", [-1, 2**32])
def test_seed_everything_rejects_seeds_numpy_would_not_take(bad):
    with pytest.raises(ValueError, match=r"seed must be an int in \[0, 2\*\*32\)"):
        seed_everything(bad)


@pytest.mark.parametrize("bad", [1.5, "0", True, np.int64(3)])
def test_seed_everything_names_a_seed_that_is_not_a_python_int(bad):
    with pytest.raises(TypeError, match=r"seed must be a Python int, got .*: pass an int such as 0 \(int\(seed\) for a "
                                        r"NumPy integer\)"):
        seed_everything(bad)


@pytest.mark.parametrize("seed", [2**64, 2**70, -2**63 - 1])
def test_loader_generator_refuses_a_seed_outside_torchs_range_by_name(seed):
    # torch.Generator().manual_seed(2**64) fails with "Overflow when unpacking long long",
    # which names neither the argument nor the range.
    with pytest.raises(ValueError, match=r"seed must be in torch's range of seeds, -2\*\*63 to 2\*\*64 - 1"):
        loader_generator(seed)


@pytest.mark.parametrize("seed", [-2**63, -1, 0, 2**63, 2**64 - 1])
def test_loader_generator_takes_every_seed_torch_takes(seed):
    g = loader_generator(seed)
    assert g.initial_seed() == seed % 2**64  # torch stores the seed as an unsigned 64-bit number


def test_run_twice_takes_any_iterable_of_tensors_and_a_sparse_one():
    """model.parameters() is a generator; a sparse gradient is compared as its dense values."""
    model = torch.nn.Linear(2, 1)
    assert run_twice(lambda: model.parameters(), 0) == 0.0
    sparse = torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,), check_invariants=True)
    assert run_twice(lambda: [sparse], 0) == 0.0
    with warnings.catch_warnings():   # torch says once per process that CSR support is in beta
        warnings.simplefilter("ignore", UserWarning)
        csr = torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()   # another sparse layout
    assert run_twice(lambda: [csr], 0) == 0.0
    assert run_twice(lambda: [csr * torch.rand(())], 0) == 0.0     # seeded again: the same draw
    with warnings.catch_warnings():   # nested tensors are a prototype: torch says so once
        warnings.simplefilter("ignore", UserWarning)
        for layout in (torch.strided, torch.jagged):     # built in each run, as train() would
            with pytest.raises(TypeError, match=r"a nested tensor.*return its tensors, list\(t.unbind\(\)\)"):
                run_twice(lambda: [torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=layout)], 0)
