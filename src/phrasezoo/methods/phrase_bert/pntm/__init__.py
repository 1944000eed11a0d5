"""PNTM, the phrase-based neural topic model of Phrase-BERT (Wang et al., 2021, section 6), with its metrics,
an LDA baseline on the same vocabulary, a plot, and the ``phrasezoo topics pntm`` command."""

from .baselines import LDABaseline, document_term_matrix
from .corpus import TopicCorpus, Vocabulary, build_vocabulary, documents_from_sentences, load_topic_corpus, tokenize
from .metrics import (
    DocumentIndex,
    lexical_diversity,
    neighbour_lexical_diversity,
    npmi,
    token_diversity,
    topic_coherence,
    topic_diversity,
)
from .model import TopicAutoencoder, contrastive_hinge_loss, orthogonality_penalty
from .topic_model import PNTM
from .visualize import visualize_topics

__all__ = [
    "PNTM",
    "DocumentIndex",
    "LDABaseline",
    "TopicAutoencoder",
    "TopicCorpus",
    "Vocabulary",
    "build_vocabulary",
    "contrastive_hinge_loss",
    "document_term_matrix",
    "documents_from_sentences",
    "lexical_diversity",
    "load_topic_corpus",
    "neighbour_lexical_diversity",
    "npmi",
    "orthogonality_penalty",
    "token_diversity",
    "tokenize",
    "topic_coherence",
    "topic_diversity",
    "visualize_topics",
]
