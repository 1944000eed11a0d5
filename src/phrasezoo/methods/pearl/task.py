"""PEARL as a zoo method: its training task and its registry entry.

Training follows the paper (section 3.4) and the official code's choices listed in DESIGN.md:

* each anchor phrase gets one positive view from the augmentation mix (character / token / phrase level);
* two hard negatives per anchor (small edit distance, low cosine under the base encoder) join the batch;
* loss = NT-Xent (tau 0.07) of anchors against positives + hard negatives, plus the phrase-type cross-entropy on
  anchors and positives (both share the anchor's type);
* before that, the character encoder is pretrained LOVE-style to mimic word vectors (GloVe for the embedded
  default) from characters and word pieces, with typos of the words as extra inputs;
* at the end, weight averaging blends the phrase encoder with its pretrained weights (``training.weight_average``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from phrasezoo.models.pearl.configuration_pearl import PearlConfig
from phrasezoo.models.pearl.modeling_pearl import PearlModel
from phrasezoo.progress import progress_enabled
from phrasezoo.registry import Method, register_method
from phrasezoo.training.losses import nt_xent

CHAR_PRETRAIN_DEFAULTS = {
    "steps": 600,
    "batch_size": 256,
    "learning_rate": 2e-3,
    "temperature": 0.1,
    "vocabulary_size": 40000,
    "typo_probability": 0.5,
    "word_vectors": "glove-6b-50d",
}


class PearlTask:
    """Batches and loss of PEARL training over a phrase dataset (see module docstring)."""

    averaged_prefixes = ("backbone.",)
    lora_modules_to_save = ["char_encoder", "type_head"]

    def __init__(
        self,
        model: PearlModel,
        dataset,
        augment: Callable[[str, random.Random], str],
        word_noise: Callable[[str, random.Random], str],
        temperature: float = 0.07,
        hard_negatives: int = 2,
        type_loss_weight: float = 1.0,
        char_pretrain: dict[str, Any] | None = None,
        facts: dict[str, Any] | None = None,
    ):
        self.model = model
        self.phrases: list[str] = list(dataset["phrase"])
        self.type_ids: list[int] = list(dataset["type_id"])
        self.negatives: list[list[str]] = list(dataset["hard_negatives"])
        self.type_of = dict(zip(self.phrases, self.type_ids))
        self.augment = augment
        self.word_noise = word_noise
        self.temperature = temperature
        self.hard_negatives = hard_negatives
        self.type_loss_weight = type_loss_weight
        self.char_pretrain = {**CHAR_PRETRAIN_DEFAULTS, **(char_pretrain or {})}
        self._facts = facts or {}

    def num_examples(self) -> int:
        return len(self.phrases)

    def facts(self) -> dict[str, Any]:
        return {"training_phrases": len(self.phrases), **self._facts}

    def make_batch(self, indices: list[int], rng: random.Random) -> dict[str, Any]:
        anchors = [self.phrases[i] for i in indices]
        positives = [self.augment(self.phrases[i], rng) for i in indices]
        negatives: list[str] = []
        for i in indices:
            pool = self.negatives[i]
            negatives.extend(rng.sample(pool, min(self.hard_negatives, len(pool))))
        anchor_types = [self.type_ids[i] for i in indices]
        # hard negatives come from the phrase table, so their types are known too
        types = anchor_types + anchor_types + [self.type_of.get(n, -100) for n in negatives]
        return {
            "features": self.model.tokenize(anchors + positives + negatives),
            "n_anchors": len(anchors),
            "type_ids": torch.tensor(types),
        }

    def compute_loss(self, model, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        device = next(model.parameters()).device
        features = {k: v.to(device) for k, v in batch["features"].items()}
        out = model(**features)
        n = batch["n_anchors"]
        contrastive = nt_xent(out.embeddings[:n], out.embeddings[n:], self.temperature)
        type_loss = F.cross_entropy(out.type_logits, batch["type_ids"].to(device), ignore_index=-100)
        loss = contrastive + self.type_loss_weight * type_loss
        return loss, {"nt_xent": float(contrastive.detach()), "type_ce": float(type_loss.detach())}

    # ------------------------------------------------------------------------------- LOVE-style char pretraining
    def prepare(self, model: PearlModel, accelerator) -> None:
        """Pretrain the character encoder to mimic word vectors (LOVE): words and their typos -> GloVe vectors."""
        options = self.char_pretrain
        if model.char_encoder is None or not options["steps"]:
            return
        from phrasezoo.resources import load_word_vectors

        table = load_word_vectors(options["word_vectors"])
        if table.dim != model.config.char_word_dim:
            raise ValueError(
                f"char_word_dim={model.config.char_word_dim} but {options['word_vectors']} has {table.dim}-d vectors; "
                "set model.char_word_dim to the word-vector size in the hub config."
            )
        words, targets = _mimic_vocabulary(table, options["vocabulary_size"])
        targets = torch.from_numpy(targets)
        encoder = model.char_encoder
        optimizer = torch.optim.Adam(encoder.parameters(), lr=options["learning_rate"])
        rng = random.Random(0)
        encoder.train()
        show = progress_enabled(accelerator.is_main_process)
        bar = tqdm(range(options["steps"]), desc="char encoder (LOVE mimic)", disable=not show)
        for _ in bar:
            idx = rng.sample(range(len(words)), options["batch_size"])
            batch_words = [words[i] for i in idx]
            noisy = [
                self.word_noise(w, rng) if rng.random() < options["typo_probability"] else w.capitalize()
                for w in batch_words
            ]
            feats = model.word_features(batch_words + noisy)
            predicted = encoder.encode_words(feats["char_ids"], feats["piece_ids"])
            target = targets[idx]
            both = torch.cat([target, target])
            loss = _mimic_loss(predicted, both, options["temperature"])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            bar.set_postfix(loss=f"{float(loss.detach()):.3f}")
        self._facts["char_pretrain_steps"] = options["steps"]
        self._facts["char_pretrain_vocabulary"] = len(words)


def _mimic_loss(predicted: torch.Tensor, targets: torch.Tensor, temperature: float) -> torch.Tensor:
    """LOVE's objective: each predicted vector is closest to its own word's target among the batch's targets."""
    unique_targets = targets[: targets.shape[0] // 2]
    n = unique_targets.shape[0]
    logits = predicted @ unique_targets.T / temperature
    labels = torch.arange(n, device=predicted.device).repeat(2)
    return F.cross_entropy(logits, labels) + (1 - (predicted * targets).sum(-1)).mean()


def _mimic_vocabulary(table, size: int) -> tuple[list[str], np.ndarray]:
    """The ``size`` most frequent alphabetic words of the table and their L2-normalised vectors."""
    chosen = [i for i, w in enumerate(table.words[: size * 3]) if w.isalpha()][:size]
    vectors = table.vectors[chosen]
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-9)
    return [table.words[i] for i in chosen], vectors.astype(np.float32)


# ------------------------------------------------------------------------------------------------------ registry
def build_task(hub_cfg, model: PearlModel, accelerator) -> PearlTask:
    """Build the PEARL phrase table (cached; the main process first) and the task around it.

    ``hub_cfg.data`` holds the arguments of :func:`phrasezoo.data.build_pearl_dataset` plus ``augmentation_mix``.
    """
    from phrasezoo.data import build_augmenter, build_pearl_dataset, char_edit

    data = dict(hub_cfg.data)
    mix = data.pop("augmentation_mix", None)
    with accelerator.main_process_first():
        dataset = build_pearl_dataset(**data, progress=accelerator.is_main_process)
    augmenter = build_augmenter(
        dataset,
        glove=data.get("glove", "glove-6b-50d"),
        mix=mix,
        use_wordnet=data.get("use_wordnet", True),
        synonym_options=data.get("synonym_options"),
    )
    method_args = hub_cfg.training.method_args
    n = len(dataset)
    facts = {
        "corpus": data.get("corpus", "embedded"),
        "phrases with a paraphrase": f"{sum(bool(p) for p in dataset['paraphrases']) / n:.1%}",
        "phrases with a hard negative": f"{sum(bool(h) for h in dataset['hard_negatives']) / n:.1%}",
        "phrase types in use": len(set(dataset["type_id"])),
    }
    return PearlTask(
        model,
        dataset,
        augment=lambda phrase, rng: augmenter.augment(phrase, rng)[0],
        word_noise=lambda word, rng: char_edit(word, rng) or word,
        temperature=method_args.get("temperature", 0.07),
        hard_negatives=method_args.get("hard_negatives", 2),
        type_loss_weight=method_args.get("type_loss_weight", 1.0),
        char_pretrain=method_args.get("char_pretrain"),
        facts=facts,
    )


def tiny_model() -> PearlModel:
    """A small random PEARL model with the real MiniLM tokenizer, for fast contract tests."""
    from transformers import AutoTokenizer, BertConfig

    from phrasezoo.resources import resolve_backbone

    backbone = resolve_backbone("minilm-l6")
    backbone_config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    config = PearlConfig(
        backbone_config=backbone_config, char_hidden_size=16, char_num_heads=2, char_intermediate_size=32
    )
    torch.manual_seed(0)
    model = PearlModel(config)
    model.set_tokenizer(AutoTokenizer.from_pretrained(backbone))
    return model


METHOD = register_method(
    Method(
        name="pearl",
        config_class=PearlConfig,
        model_class=PearlModel,
        model_files=("phrasezoo.models.pearl.configuration_pearl", "phrasezoo.models.pearl.modeling_pearl"),
        from_backbone=PearlModel.from_backbone,
        build_task=build_task,
        tiny_model=tiny_model,
        sample_inputs=["The New York Times", "NYTimes", "New York Post", "New-York Daily Times", "ab"],
        bad_inputs=[([], "empty list"), ([""], "empty"), (["ok", 3], "not a string"), ("   ", "empty")],
        description="PEARL: phrase encoder + LOVE character encoder + phrase-type head (Chen et al., 2024)",
    )
)
