"""Give an exported PEARL model the lexical channel (issue 36's model-level option) and save it as a new folder.

The channel (``PearlModel.set_lexical_channel``) appends a hashed character n-gram TF-IDF vector to ``encode``; its
IDF comes from a corpus of names that are neither benchmark nor study items (``matching_dev.lexical_corpus``: the
wiki-leads titles and the embedded Wikipedia dump's link titles and anchors). Bucket count and weight default to the
values chosen on AutoFJ's dev datasets (``experiments/pearl/lexical_channel.py study``). The new folder loads like any export
(``AutoModel.from_pretrained(folder, trust_remote_code=True)``), so the matcher comparison measures it as a plain
cosine:

    .venv/bin/python experiments/pearl/lexical_channel.py add --model /path/to/pearl-mini --output /tmp/pearl-mini-lexical
    OMP_NUM_THREADS=1 .venv/bin/python experiments/pearl/lexical_channel.py study   # bucket count x weight on dev
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "matching"))
sys.path.insert(1, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from matching_alias_proxy import alias_mrr, load_alias_groups  # noqa: E402
from matching_dev import RESULTS, CachedEncoder, lexical_corpus, summarise  # noqa: E402

from phrasezoo.evaluation.tasks.autofj import autofj_names, read_autofj  # noqa: E402
from phrasezoo.models.pearl.modeling_pearl import _hashed_ngrams  # noqa: E402


def lexical_vectors(texts: list[str], idf: np.ndarray, dim: int) -> np.ndarray:
    """The embedded lexical channel of ``texts`` exactly as the PEARL model computes it (its own function)."""
    rows, columns, values = _hashed_ngrams(texts, dim, 2, 4)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    np.add.at(out, (np.asarray(rows), np.asarray(columns)), np.asarray(values, dtype=np.float32) * idf[columns])
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def study_embedded(args) -> None:
    """The model-level option simulated on the study's encoder: its vector concatenated with the hashed char n-gram
    TF-IDF vector (weight w), one plain cosine; per bucket count and weight, dev accuracy and the alias proxy."""
    encoder = CachedEncoder(args.model)
    corpus = lexical_corpus()
    tables = read_autofj(autofj_names("dev"))
    groups = load_alias_groups()
    report = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "model": args.model,
              "idf_corpus": f"{len(corpus)} names: wiki-leads titles + the embedded dump's link titles and anchors",
              "rows": {}}  # fmt: skip
    for dim in args.dims:
        rows, columns, _ = _hashed_ngrams(corpus, dim, 2, 4)
        pairs = np.unique(np.stack([np.asarray(rows), np.asarray(columns)]), axis=1)
        df = np.bincount(pairs[1], minlength=dim)
        idf = (np.log((1 + len(corpus)) / (1 + df)) + 1.0).astype(np.float32)
        for weight in args.weights:

            def vectors(texts, idf=idf, dim=dim, weight=weight):
                joint = np.concatenate([encoder.encode(texts), weight * lexical_vectors(texts, idf, dim)], 1)
                return joint / np.linalg.norm(joint, axis=1, keepdims=True)

            per = {}
            for table in tables:
                queries = table.queries()
                best = (vectors(queries) @ vectors(table.left).T).argmax(1)
                per[table.name] = {"accuracy": float(np.mean([table.left[b] == table.gold[q]
                                                              for b, q in zip(best, queries)]))}  # fmt: skip
            result = summarise(per)
            result["alias_proxy"] = alias_mrr(groups, lambda q, c: vectors(list(q)) @ vectors(list(c)).T)
            report["rows"][f"dim={dim} w={weight}"] = result
            proxy = result["alias_proxy"]
            print(f"dim {dim:5d} w {weight:4.2f}  acc {100 * result['accuracy']:5.1f}  alias n->a "
                  f"{proxy['name->alias']:.3f} a->n {proxy['alias->name']:.3f}", flush=True)  # fmt: skip
    out = RESULTS / f"dev-embedded-lexical-{encoder.name.replace(':', '-').replace('/', '-')}.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}", file=sys.stderr)


def add_channel(args) -> None:
    from phrasezoo.models.pearl.modeling_pearl import PearlModel

    # this repository's model code (an older export's copied code may predate the option); save_pretrained copies it
    model = PearlModel.from_pretrained(args.model).eval()
    corpus = lexical_corpus()
    model.set_lexical_channel(corpus, dim=args.dim, weight=args.weight)
    output = Path(args.output)
    model.save_pretrained(output)
    model.tokenizer.save_pretrained(output)
    for extra in Path(args.model).iterdir():  # model card, results files: copied as they are
        if extra.is_file() and not (output / extra.name).exists():
            shutil.copy(extra, output / extra.name)
    print(f"saved {output} (lexical channel: {args.dim} buckets, weight {args.weight}, IDF over {len(corpus)} names)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("add", help="save an exported PEARL model with the lexical channel as a new folder")
    p.add_argument("--model", required=True, help="an exported PEARL folder")
    p.add_argument("--output", required=True, help="where to save the model with the lexical channel")
    p.add_argument("--dim", type=int, default=2048, help="hash buckets (default 2048)")
    p.add_argument("--weight", type=float, default=0.7, help="weight of the channel (default 0.7)")
    p.set_defaults(func=add_channel)
    p = sub.add_parser("study", help="the channel simulated on an encoder's cached vectors (dev-10, alias proxy)")
    p.add_argument("--model", default="baseline:minilm-l6")
    p.add_argument("--dims", type=int, nargs="+", default=[512, 1024, 2048, 4096])
    p.add_argument("--weights", type=float, nargs="+", default=[0.5, 0.7, 1.0])
    p.set_defaults(func=study_embedded)
    args = parser.parse_args()
    os.environ.setdefault("PHRASEZOO_NO_PROGRESS", "1")
    args.func(args)


if __name__ == "__main__":
    main()
