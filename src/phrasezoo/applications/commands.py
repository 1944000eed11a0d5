"""``phrasezoo topics``: the topic applications of the zoo under one command.

Each application lives in the home of the method it serves and is declared there (``Method.topic_commands``):

- ``topics pntm``: Phrase-BERT's phrase-based neural topic model against LDA (``methods/phrase_bert/pntm/``).
- ``topics mine`` / ``topics show``: UCTopic's topic mining of phrases in context (``methods/uctopic/topic_mining/``).
"""

from __future__ import annotations

import argparse
import sys

from phrasezoo.core.errors import run_command
from phrasezoo.zoo.registry import get_method, list_methods

EPILOG = """\
examples:
  phrasezoo topics pntm --model phrase-bert-mini --model baseline:minilm-l6 --k 20
  phrasezoo topics mine --model uctopic-mini --corpus embedded --k auto
  phrasezoo topics show outputs/topics-embedded --top-n 20

Run `phrasezoo topics <subcommand> --help` for the options of each.
"""


def register(subparsers) -> None:
    """Add ``topics`` with its ``pntm``, ``mine`` and ``show`` subcommands to the main ``phrasezoo`` parser."""
    topics = subparsers.add_parser(
        "topics",
        help="topic models on zoo encoders: PNTM vs LDA (Phrase-BERT), topic mining (UCTopic)",
        description="Topic applications of the zoo's phrase encoders.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = topics.add_subparsers(dest="topics_command", required=True, metavar="SUBCOMMAND")
    for name in list_methods():
        method = get_method(name)
        for reference in method.topic_commands:
            method.load(reference)(sub)


def main(argv: list[str] | None = None) -> int:
    """``python -m phrasezoo.methods.<name>.<application>``: the ``topics`` command on its own."""
    parser = argparse.ArgumentParser(prog="phrasezoo", description=__doc__)
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-") and argv[0] != "topics":  # the subcommand without the `topics` word
        argv = ["topics", *argv]
    args = parser.parse_args(argv)
    return run_command(lambda: args.func(args))
