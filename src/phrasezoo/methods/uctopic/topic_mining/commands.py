"""CLI of topic mining: ``phrasezoo topics mine|show``; :func:`register` adds it to the main ``phrasezoo`` command.

Also runnable on its own: ``python -m phrasezoo.methods.uctopic.topic_mining mine --model outputs/uctopic-mini ...``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from transformers import AutoModel

from phrasezoo.core.recipes import list_recipes
from phrasezoo.resources import iter_corpus

from ..ccl import CCLConfig
from .miner import TopicMiner
from .visualize import visualize_topics

EPILOG = """\
examples:
  phrasezoo topics mine --model uctopic-mini --corpus embedded --k auto --output outputs/topics-embedded
  phrasezoo topics mine --model outputs/uctopic-mini --corpus reviews.txt --k 12 --no-ccl
  phrasezoo topics show outputs/topics-embedded --top-n 20

--model: an exported UCTopic folder, or the name of a trained recipe (outputs/<name>/), or a Hub id (online).
--corpus: embedded | embedded-wiki | embedded-news | a UTF-8 .txt file (one document per line, blank lines skipped)
          | hub:<dataset>[:<config>].
"""


def add_mining_commands(sub) -> None:
    """Add the ``mine`` and ``show`` subcommands to the subparsers of ``phrasezoo topics``."""
    mine = sub.add_parser("mine", help="fit a topic miner on a corpus, print its topics, save it and a plot")
    mine.add_argument("--model", required=True, help="UCTopic folder, trained recipe name or Hub id")
    mine.add_argument("--corpus", default="embedded", help="corpus name or file (default: embedded)")
    mine.add_argument("--max-documents", type=int, help="read only the first documents")
    mine.add_argument("--k", default="auto", help="number of topics, or 'auto' (silhouette over --k-range)")
    mine.add_argument("--k-range", default="2:15", help="range of topic numbers tried by 'auto' (default 2:15)")
    mine.add_argument("--no-ccl", action="store_true", help="skip the cluster-assisted contrastive finetuning")
    mine.add_argument("--ccl-steps", type=int, default=100, help="CCL steps (default 100)")
    mine.add_argument("--top-fraction", type=float, default=0.1, help="confident share of each cluster (default 0.1)")
    mine.add_argument("--sample-size", type=int, default=10_000, help="mentions used for k and CCL (default 10000)")
    mine.add_argument("--top-n", type=int, default=10, help="phrases printed per topic (default 10)")
    mine.add_argument("--min-frequency", type=int, default=3, help="minimum mentions of a listed phrase (default 3)")
    mine.add_argument("--output", help="folder for the fitted miner and topics.png (default outputs/topics-<corpus>)")
    mine.add_argument("--no-plot", action="store_true", help="do not draw topics.png")
    mine.add_argument("--fp32", action="store_true", help="encode and finetune in float32 (default: bf16 autocast)")
    mine.add_argument("--seed", type=int, default=0)
    mine.add_argument("--no-progress", action="store_true", help="no progress bars")
    mine.set_defaults(func=run_mine)

    show = sub.add_parser("show", help="print the topics of a saved miner")
    show.add_argument("folder", help="folder written by `topics mine`")
    show.add_argument("--top-n", type=int, default=10)
    show.add_argument("--min-frequency", type=int, help="minimum mentions of a listed phrase (default: the miner's)")
    show.set_defaults(func=run_show)


def load_topic_model(spec: str):
    """The UCTopic model named by ``spec``: a folder, ``outputs/<recipe>``, or a Hub id (needs a network)."""
    path = Path(spec)
    if not path.is_dir() and (Path("outputs") / spec).is_dir():
        path = Path("outputs") / spec
    if path.is_dir():
        if not (path / "config.json").exists():
            raise FileNotFoundError(f"{path} holds no exported model (config.json is missing).")
        return AutoModel.from_pretrained(str(path), trust_remote_code=True).eval()
    if spec in list_recipes():
        raise FileNotFoundError(
            f"No trained model at outputs/{spec}/. Train it first: `phrasezoo train {spec}` "
            f"(or `accelerate launch train.py hub_configs/{spec}.yaml`)."
        )
    if "/" in spec and not path.exists():
        return AutoModel.from_pretrained(spec, trust_remote_code=True).eval()
    raise FileNotFoundError(f"Model {spec} not found: give an exported folder, a trained recipe name or a Hub id.")


def run_mine(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    try:
        low, high = (int(x) for x in args.k_range.split(":"))
        n_topics = None if args.k == "auto" else int(args.k)
    except ValueError:
        print("error: --k is 'auto' or an integer; --k-range looks like 2:15", file=sys.stderr)
        return 2
    documents = list(iter_corpus(args.corpus, max_documents=args.max_documents))  # a bad file fails before the model
    if not documents:
        print(f"error: {args.corpus} holds no document (one per line; blank lines are skipped).", file=sys.stderr)
        return 2
    try:
        model = load_topic_model(args.model)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f">> {len(documents)} documents from {args.corpus}", flush=True)
    precision = "no" if args.fp32 else "bf16"
    miner = TopicMiner(
        model,
        n_topics=n_topics,
        topic_range=(low, high),
        ccl=not args.no_ccl,
        ccl_config=CCLConfig(
            steps=args.ccl_steps, top_fraction=args.top_fraction, seed=args.seed, mixed_precision=precision
        ),
        sample_size=args.sample_size,
        min_frequency=args.min_frequency,
        mixed_precision=precision,
        seed=args.seed,
        progress=not args.no_progress,
    )
    miner.fit(documents)
    for message in miner.messages_:
        print(f">> {message}")
    print(f"\n{miner.n_topics_} topics (top {args.top_n} phrases seen at least {args.min_frequency} times):\n")
    print(miner.format_topics(top_n=args.top_n))
    output = Path(args.output or Path("outputs") / f"topics-{Path(args.corpus).stem.replace(':', '-')}")
    miner.save(output)
    if not args.no_plot:
        visualize_topics(miner, output / "topics.png")
    print(f"\n>> saved to {output}/ in {(time.perf_counter() - started) / 60:.1f} min")
    return 0


def run_show(args: argparse.Namespace) -> int:
    try:
        miner = TopicMiner.load(args.folder, load_model=False, progress=False)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError) as err:  # a damaged or foreign topics.json / .npy file
        print(f"error: {args.folder} holds no readable topic miner ({type(err).__name__}: {err}); write it again "
              "with `phrasezoo topics mine`.", file=sys.stderr)  # fmt: skip
        return 2
    print(miner.format_topics(top_n=args.top_n, min_frequency=args.min_frequency))
    return 0
