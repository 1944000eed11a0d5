"""The real alias pairs a PEARL recipe trains on (``data.alias_pairs.sources``), each source kept off the dev suite
and the test benchmarks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from phrasezoo.data.benchmarks.held_out import dev_set_strings
from phrasezoo.data.corpus.wiki_links import clean_alias_pairs, link_pairs
from phrasezoo.data.lexical.dev_compound import wordnet_training_pairs
from phrasezoo.resources import load_wordnet
from phrasezoo.zoo.assembly import Context, Stage

from ..data import add_alias_rows, mine_alias_negatives
from .lead_aliases import lead_alias_pairs
from .name_aliases import name_alias_rows
from .wordnet_names import sample_pairs, wordnet_name_pairs

ALIAS_SOURCES = ("links", "leads", "wordnet", "wordnet-names", "names")


def _wordnet(source: str):
    wordnet = load_wordnet()
    if wordnet is None:
        raise ValueError(f"data.alias_pairs.sources has {source!r} but WordNet is not installed (wordnet-base).")
    return wordnet


def collect_alias_pairs(alias: Mapping, blocklist, dev_strings=None) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """``(pairs, counts)``: the training alias pairs of the sources ``alias["sources"]`` names (default: links and
    leads), with the number the benchmark filter dropped and, for ``wordnet-names``, how many pairs it gave.

    - ``links`` / ``leads``: the embedded dump's link anchor <-> title and the aliases its leads state, training
      titles only (never ``dev_alias``'s);
    - ``wordnet``: compound <-> one-word synonyms of the synsets ``dev_compound`` does not use;
    - ``wordnet-names``: the other names of WordNet's named things (:mod:`phrasezoo.methods.pearl.aliases.wordnet_names`), none
      touching a dev-suite string (``dev_strings``, a callable returning normal forms; default: the whole suite's),
      at most ``alias["wordnet_names_max"]`` pairs.

    ``names`` (the name benchmark's training entities, :mod:`.name_aliases`) is not collected here: its rows come with
    hard negatives of their own (:class:`AliasRows`).
    """
    sources = list(alias.get("sources", ["links", "leads"]))
    unknown = set(sources) - set(ALIAS_SOURCES)
    if unknown:
        raise ValueError(f"data.alias_pairs.sources: unknown {sorted(unknown)}; use any of {list(ALIAS_SOURCES)}.")
    raw = list(link_pairs(alias.get("dump", "embedded"), progress=False)) if "links" in sources else []
    raw += list(lead_alias_pairs()) if "leads" in sources else []
    pairs, report, _ = clean_alias_pairs(raw, blocklist, split="train")
    dropped = report.get("dropped", 0)
    counts: dict[str, int] = {}
    if "wordnet" in sources:
        # not split by title: the dev set's synsets are already left out (compound_dev_synsets)
        extra, extra_report, _ = clean_alias_pairs(wordnet_training_pairs(_wordnet("wordnet")), blocklist, split=None)
        pairs += extra
        dropped += extra_report.get("dropped", 0)
    if "wordnet-names" in sources:
        exclude = (dev_strings or dev_set_strings)()
        names = wordnet_name_pairs(_wordnet("wordnet-names"), exclude)
        extra, extra_report, _ = clean_alias_pairs(names, blocklist, split=None)
        extra = sample_pairs(extra, alias.get("wordnet_names_max"))
        pairs += extra
        dropped += extra_report.get("dropped", 0)
        counts["WordNet name pairs (no dev-suite string)"] = len(extra)
    return pairs, {"dropped": dropped, **counts}


@dataclass(frozen=True)
class AliasRows:
    """PEARL's own training part (``data.alias_pairs``): alias rows added to the (filtered) table, each pair kept off
    the dev suite and the test benchmarks; applied by :func:`phrasezoo.zoo.assembly.assemble` after the benchmark filter
    and before the teacher embeds the table."""

    stage: Stage = Stage.EXTEND
    data_keys: tuple[str, ...] = ("alias_pairs",)

    def apply(self, dataset: Any, recipe: Any, context: Context) -> tuple[Any, dict[str, Any]]:
        alias = recipe.data.get("alias_pairs")
        if not alias:
            return dataset, {}
        with context.main_process_first():  # the dev sets may be built (and cached) on first use
            pairs, report = collect_alias_pairs(
                alias, context.blocklist(), lambda: dev_set_strings(progress=context.progress)
            )
        negatives = None
        if int(alias.get("hard_negatives", 0)) > 0:
            with context.main_process_first():
                negatives = mine_alias_negatives(pairs, int(alias["hard_negatives"]))
        name_facts: dict[str, Any] = {}
        if "names" in alias.get("sources", ()):
            names, siblings, name_facts = self.names(alias, context)
            pairs = pairs + names
            negatives = {**(negatives or {}), **siblings}
        dataset, facts = add_alias_rows(
            dataset, pairs, int(alias.get("repeat", 1)), negatives, typed=bool(alias.get("typed", False))
        )
        facts["alias pairs (training titles; benchmark items removed)"] = len(pairs)
        facts["alias pairs dropped by the benchmark filter"] = report.pop("dropped")
        facts.update({f"of which {what}": n for what, n in report.items()})
        return dataset, {**facts, **name_facts}

    @staticmethod
    def names(alias, context: Context) -> tuple[list[tuple[str, str]], dict[str, list[str]], dict[str, Any]]:
        """The ``names`` source: the name benchmark's training entities as pairs, their look-alike siblings and
        facts (:func:`.name_aliases.name_alias_rows`), built with the main process first."""
        with context.main_process_first():
            return name_alias_rows(alias, context.blocklist(), lambda: dev_set_strings(progress=context.progress))
