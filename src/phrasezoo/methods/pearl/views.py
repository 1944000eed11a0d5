"""PEARL's positive views and word noise as plain objects: the functions its task calls, with state the GPU job's
codec can carry (:mod:`phrasezoo.gpu_job.codec`: phrasezoo objects and plain values, no closures).

:class:`PositiveViews` draws the view that :meth:`Augmenter.augment` draws, guarded like
:func:`~phrasezoo.methods.pearl.decontaminate.guard_views` when a blocklist is given; :class:`CharNoise` is the
character noise of the LOVE pretraining. Both import without the data builders' libraries.
"""

from __future__ import annotations

import random
import weakref
from collections.abc import Mapping
from typing import Any

from .augment import Augmenter, char_edit

#: the augmenter each PositiveViews built (kept out of the object's own attributes, which travel)
_AUGMENTERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class PositiveViews:
    """``(phrase, rng) -> view``: the augmentation mix's view of ``phrase``; with ``blocklist``, a view that would
    touch a benchmark item with its anchor (``blocklist.pair_matches(phrase, view, mode)``) is the anchor instead.

    ``synonyms``, ``paraphrases`` and ``mix`` are the :class:`Augmenter`'s arguments (``mix`` as the recipe gives
    it), so the augmenter it rebuilds draws exactly what the original one draws."""

    def __init__(self, synonyms, paraphrases: Mapping[str, list[str]], mix: Mapping[str, float] | None,
                 blocklist: Any = None, mode: str | None = None):  # fmt: skip
        self.synonyms = synonyms
        self.paraphrases = dict(paraphrases)
        self.mix = dict(mix) if mix is not None else None
        self.blocklist = blocklist
        self.mode = mode

    @classmethod
    def from_augmenter(cls, augmenter: Augmenter, mix, blocklist: Any = None, mode: str | None = None):
        """The views of a built augmenter (its table and paraphrases; ``mix`` as it was given to it)."""
        views = cls(augmenter.synonyms, augmenter.paraphrases, mix, blocklist, mode)
        _AUGMENTERS[views] = augmenter
        return views

    def augmenter(self) -> Augmenter:
        built = _AUGMENTERS.get(self)
        if built is None:
            built = _AUGMENTERS[self] = Augmenter(synonyms=self.synonyms, paraphrases=self.paraphrases, mix=self.mix)
        return built

    def __call__(self, phrase: str, rng: random.Random) -> str:
        view = self.augmenter().augment(phrase, rng)[0]
        if self.blocklist is not None and view != phrase and self.blocklist.pair_matches(phrase, view, self.mode):
            return phrase
        return view


class CharNoise:
    """``(word, rng) -> word``: one character edit of ``word`` (the word itself when none applies)."""

    def __call__(self, word: str, rng: random.Random) -> str:
        return char_edit(word, rng) or word
