"""UCTopic topic mining: noun phrases in context -> topics, with cluster-assisted contrastive finetuning (CCL).

    from phrasezoo.methods.uctopic.topic_mining import TopicMiner, visualize_topics
    miner = TopicMiner(model, n_topics=None).fit(documents)      # model: a UCTopic model
    print(miner.format_topics(top_n=10))
    miner.save("outputs/topics"); visualize_topics(miner, "outputs/topics/topics.png")

CLI: ``phrasezoo topics mine --model <folder or recipe> --corpus embedded --k auto`` (see :mod:`.commands`).
"""

from ..ccl import CCLConfig, CCLResult, PseudoLabels, ccl_finetune, ccl_loss, majority_vote, pseudo_labels
from .miner import PhraseTopic, TopicAssignment, TopicMiner
from .phrases import NounPhraseExtractor, PhraseMention, lemma_keys
from .visualize import visualize_topics

__all__ = [
    "CCLConfig",
    "CCLResult",
    "NounPhraseExtractor",
    "PhraseMention",
    "PhraseTopic",
    "PseudoLabels",
    "TopicAssignment",
    "TopicMiner",
    "ccl_finetune",
    "ccl_loss",
    "lemma_keys",
    "majority_vote",
    "pseudo_labels",
    "visualize_topics",
]
