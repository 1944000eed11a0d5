"""tests/training/golden.py: what counts as the same training on a CPU whose kernels have no record."""

from __future__ import annotations

from tests.training.golden import close_facts, cpu_kernels


def test_losses_may_differ_by_rounding_and_nothing_else_may():
    expected = [["steps", 2], ["last losses", {"loss": 7.2943, "nt_xent": 2.2845}], ["backbone", "minilm"]]
    assert close_facts([["steps", 2], ["last losses", {"loss": 7.2925, "nt_xent": 2.282}], ["backbone", "minilm"]],
                       expected)  # fmt: skip
    assert not close_facts([["steps", 3], ["last losses", {"loss": 7.2943, "nt_xent": 2.2845}], ["backbone", "minilm"]],
                           expected)  # fmt: skip
    assert not close_facts([["steps", 2], ["last losses", {"loss": 8.0, "nt_xent": 2.2845}], ["backbone", "minilm"]],
                           expected)  # fmt: skip
    assert not close_facts([["steps", 2], ["last losses", {"loss": 7.2943}], ["backbone", "minilm"]], expected)
    assert not close_facts([["steps", 2], ["backbone", "minilm"]], expected)


def test_the_kernel_key_names_torch_and_an_instruction_set():
    key = cpu_kernels()
    assert key.startswith("torch ") and ", " in key
