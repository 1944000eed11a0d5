"""The thread tuner prefers the faster setting and keeps re-checking the other one."""

from __future__ import annotations

import torch

from phrasezoo.encoders.cpu_threads import ThreadTuner


def test_tuner_picks_the_faster_setting_and_explores():
    tuner = ThreadTuner(explore_every=5)
    tuner.options = [1, 2]
    tuner.rate = {1: None, 2: None}
    assert tuner.choose() == 2  # the default first
    tuner.update(2, units=100, seconds=1.0)
    assert tuner.choose() == 1
    tuner.update(1, units=100, seconds=0.2)  # one thread is 5x faster (busy machine)
    picks = [tuner.choose() for _ in range(10)]
    assert picks.count(1) == 8 and picks.count(2) == 2


def test_batch_context_restores_the_thread_count():
    before = torch.get_num_threads()
    tuner = ThreadTuner()
    for _ in range(3):
        with tuner.batch(10) as threads:
            assert torch.get_num_threads() == threads
    assert torch.get_num_threads() == before
    assert all(v is not None for v in tuner.rate.values())
