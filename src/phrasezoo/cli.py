"""The ``phrasezoo`` command: list, train, evaluate, report, export, push, pipeline."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points
from pathlib import Path

from huggingface_hub.errors import HfHubHTTPError

from phrasezoo.applications.commands import register as register_topics
from phrasezoo.core.errors import run_command
from phrasezoo.core.recipes import list_recipes, load_recipe
from phrasezoo.gpu_job.commands import register as register_gpu_job
from phrasezoo.hub.export import export_model, refresh_card
from phrasezoo.hub.push import plan_push, push_folder
from phrasezoo.train import LAUNCH_FLAGS, add_train_arguments, train_command
from phrasezoo.training.checkpoint import latest_checkpoint, load_checkpoint
from phrasezoo.training.finalize import finalize_model
from phrasezoo.zoo.registry import create_model, get_method, list_methods

EPILOG = f"""examples:
  phrasezoo list                                       methods and published recipes
  phrasezoo pipeline hub_configs/pearl-mini.yaml       train + evaluate + export + comparison table (main job)
  phrasezoo train pearl-mini --set training.max_steps=50
  accelerate launch {LAUNCH_FLAGS} train.py pearl-mini
                                                       the same training in 2 processes (GPUs: one each); from a
                                                       wheel install: ... -m phrasezoo.cli train pearl-mini
  phrasezoo evaluate --model outputs/pearl-mini --tasks all --output results/pearl/pearl-mini.json
  phrasezoo report results/*/*.json
  phrasezoo dev-eval --model outputs/pearl-mini           dev-suite score for model selection (no test data)
  phrasezoo push outputs/pearl-mini --repo-id me/pearl-mini
  phrasezoo export pearl-mini --format sentence-transformers      SentenceTransformer-loadable copy
  phrasezoo convert pearl Lihuchen/pearl_small outputs/pearl-small   the authors' published checkpoint, as a zoo export
  phrasezoo match join --left a.csv --right b.csv --output joined.csv   fuzzy join (also: match link)
  phrasezoo device pack codebook-phrase-gpu            pack a recipe for a lent GPU (then run, unpack: docs/gpu-job.md)
"""

#: Entry-point groups through which packages outside the import ladder (phrasezoo.match, phrasezoo.integrations)
#: add subcommands and export formats: the CLI finds them by name and never imports them itself.
COMMAND_PLUGINS = "phrasezoo.commands"
EXPORT_FORMAT_PLUGINS = "phrasezoo.export_formats"


def plugins(group: str) -> dict:
    """Installed entry points of ``group`` by name (empty when the package metadata lacks them)."""
    return {ep.name: ep for ep in entry_points(group=group)}


def build_parser() -> argparse.ArgumentParser:
    """The ``phrasezoo`` parser: the core commands, then the workflows' and the plugins' subcommands."""
    parser = argparse.ArgumentParser(
        prog="phrasezoo",
        description="A model zoo of phrase-representation methods: train, evaluate, export and publish.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("list", help="list the methods and the recipes (hub_configs/*.yaml: the published checkpoints)")

    train = sub.add_parser(
        "train",
        help="train a recipe in this process (several: accelerate launch ... -m phrasezoo.cli train, docs/training.md)",
        description="Train a model from its recipe; resumes from outputs/<name>/checkpoints; exports at the end.",
    )
    add_train_arguments(train)
    _add_pipeline_command(sub)
    _add_export_command(sub)
    _add_push_command(sub)
    _add_convert_command(sub)
    _add_workflow_commands(sub)
    return parser


def _add_pipeline_command(sub) -> None:
    """``phrasezoo pipeline``: the main job's options (what to skip, reuse or rewrite)."""
    pipeline = sub.add_parser(
        "pipeline",
        help="the main job: train, evaluate model and baselines, export with the results, print the table",
        description="Train (resuming if possible) and export a recipe, evaluate it and the baselines named in "
        "its eval section with the benchmark suite, regenerate the model card with the results and print the "
        "comparison table.",
    )
    pipeline.add_argument("config", help="recipe name or path")
    pipeline.add_argument(
        "--benchmarks-dir", help="benchmark data (default $PHRASEZOO_BENCHMARKS or ../shared/benchmarks)"
    )
    pipeline.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    pipeline.add_argument(
        "--reuse-baselines",
        action="store_true",
        help="reuse baseline results already in results/ instead of evaluating the baselines in this run (default: "
        "measure them now, so that model and baseline come from the same run)",
    )
    pipeline.add_argument("--force-eval", action="store_true", help=argparse.SUPPRESS)  # the default now; kept
    pipeline.add_argument("--no-resume", action="store_true", help="retrain from scratch")
    pipeline.add_argument(
        "--no-train",
        action="store_true",
        help="skip training: evaluate the model already exported in outputs/<name>/ (e.g. after adding tasks)",
    )
    pipeline.add_argument(
        "--dev-only",
        action="store_true",
        help="stop after the recipe's eval.select_on_dev choice: no benchmark is evaluated (to compare recipe "
        "variants on dev data before any of their test numbers exist)",
    )
    pipeline.add_argument("--update-readme", metavar="README", help="rewrite the results table block of this README")


def _add_export_command(sub) -> None:
    """``phrasezoo export``: rewrite a recipe's Hub folder or write another format (the export plugins')."""
    export = sub.add_parser(
        "export",
        help="(re)write the Hub-ready folder of a recipe, e.g. with evaluation results in its card",
        description="Regenerate outputs/<name>/README.md (model card) from results files, or export the latest "
        "training checkpoint when the run was interrupted (--from-checkpoint).",
    )
    export.add_argument("config", help="recipe name or path")
    export.add_argument(
        "--results", help="results file of this model for the card (default results/<method>/<name>.json)"
    )
    export.add_argument("--baseline", action="append", default=[], help="results files of baselines for the card table")
    export.add_argument("--from-checkpoint", action="store_true", help="export the latest checkpoint's weights")
    export.add_argument(
        "--format",
        choices=["hub", *sorted(plugins(EXPORT_FORMAT_PLUGINS))],
        default="hub",
        help="hub: the Hub-ready folder (default); sentence-transformers: a copy of outputs/<name>/ that "
        "SentenceTransformer(folder) loads, written to --output",
    )
    export.add_argument("--output", help="folder for --format other than hub (default outputs/<name>-<format>)")
    export.add_argument("--overwrite", action="store_true", help="replace an existing --output folder")


def _add_push_command(sub) -> None:
    """``phrasezoo push``: upload an exported folder to the Hub."""
    push = sub.add_parser(
        "push",
        help="upload an exported folder to the Hugging Face Hub (needs a token)",
        description="Upload the exported files of a folder (a model, its sentence-transformers copy or a saved topic "
        "model) in one commit; checkpoints, soup ingredients, optimizer state, logs and scratch files stay here. "
        "An unchanged folder makes no commit. A Space folder (spaces/<name>/) goes to a Space repository with the "
        "phrasezoo wheel its requirements.txt names (./wheels/...): built from this checkout, or --wheel. The "
        "endpoint and token are huggingface_hub's (HF_ENDPOINT, HF_TOKEN or `hf auth login`).",
    )
    push.add_argument("folder", help="exported folder, e.g. outputs/pearl-mini")
    push.add_argument("--repo-id", required=True, help="target repository, e.g. my-org/pearl-mini")
    push.add_argument("--private", action="store_true")
    push.add_argument("--message", help="commit message (default: 'Upload <kind> with phrasezoo')")
    push.add_argument("--keep-remote-files", action="store_true", help="keep remote files the export does not have")
    push.add_argument("--dry-run", action="store_true", help="list what would be uploaded and left out; upload nothing")
    push.add_argument("--wheel", help="a Space's phrasezoo wheel to upload (default: built from this checkout)")


def _add_convert_command(sub) -> None:
    """``phrasezoo convert``: a paper's published checkpoint as a zoo export."""
    convert = sub.add_parser(
        "convert",
        help="convert a paper's published checkpoint (PEARL, Phrase-BERT, UCTopic) into a zoo export",
        description="Download (or read) the checkpoint the authors of a method published and write it as a zoo "
        "export: safetensors weights, config with auto_map, the model's code, tokenizer and a card crediting the "
        "authors with the source repository, its revision and its licence. The result loads with "
        "AutoModel.from_pretrained(folder or repo id, trust_remote_code=True) and compares with the zoo's models in "
        "`phrasezoo evaluate`. SLICE and the codebook paper published no weights.",
    )
    convert.add_argument("method", help="the method (its registry name) whose paper published the checkpoint: "
                         "pearl, phrase_bert or uctopic")  # fmt: skip
    convert.add_argument("source", help="Hub repo id (e.g. Lihuchen/pearl_small, whaleloops/phrase-bert, "
                         "JiachengLi/uctopic-base) or a local folder holding a copy of it")  # fmt: skip
    convert.add_argument("output", help="folder for the export")
    convert.add_argument("--revision", help="Hub revision to download (default: main); for a folder, the revision "
                         "it is a copy of, recorded in the card")  # fmt: skip
    convert.add_argument("--source-repo", help="the published repository a folder or mirror is a copy of (needed "
                         "when a method has several: Lihuchen/pearl_small or Lihuchen/pearl_base)")  # fmt: skip
    convert.add_argument("--repo-id", help="where you will push the export, for the card's usage example")
    convert.add_argument("--overwrite", action="store_true", help="replace an existing output folder")


def _add_workflow_commands(sub) -> None:
    """The subcommands the workflows (evaluation, topics, the GPU job) and the installed plugins register."""
    try:  # the evaluation workflow's own dependencies (datasets, scikit-learn, ...) are optional for the other commands
        from phrasezoo.evaluation.commands import register  # lazy: optional evaluation dependencies
    except ImportError:  # pragma: no cover - an evaluation dependency missing
        register = None
    if register is not None:
        register(sub)
    register_topics(sub)
    register_gpu_job(sub)
    for name, entry_point in sorted(plugins(COMMAND_PLUGINS).items()):
        try:
            entry_point.load()(sub)
        except Exception as err:  # noqa: BLE001 - a broken plugin must not take the whole CLI down
            print(f"warning: the `{name}` command is unavailable ({type(err).__name__}: {err})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: _run(args))  # a bad or missing user file: one "error:" line, exit status 2


def _run(args: argparse.Namespace) -> int:
    if args.command == "list":
        return _list()
    if args.command == "train":
        return train_command(args)  # under a launcher, its error line is the first process's only
    if args.command == "pipeline":
        from phrasezoo.pipeline import run_pipeline  # lazy: the main job needs the optional evaluation dependencies

        run_pipeline(
            args.config,
            benchmarks_dir=args.benchmarks_dir,
            overrides=args.overrides,
            reuse_baselines=args.reuse_baselines and not args.force_eval,
            resume=not args.no_resume,
            update_readme=args.update_readme,
            train=not args.no_train,
            dev_only=args.dev_only,
        )
        return 0
    if args.command == "export":
        return _export(args)
    if args.command == "push":
        return _push(args)
    if args.command == "convert":
        return _convert(args)
    return args.func(args)


def _list() -> int:
    print("methods:")
    for name in list_methods():
        print(f"  {name:12s} {get_method(name).description}")
    print("recipes (hub_configs/*.yaml):")
    for name in list_recipes():
        cfg = load_recipe(name)
        print(f"  {name:18s} {cfg.repo_id:28s} method={cfg.method:8s} backbone={cfg.backbone or '-'}")
    return 0


def _push(args) -> int:
    """``phrasezoo push``: the plan, then the commit; errors as one line (exit code 2), never a traceback."""
    try:
        plan = plan_push(args.folder)
    except (FileNotFoundError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f">> {plan.folder}: {plan.kind.name}, {len(plan.files)} files ({plan.size / 2**20:.1f} MiB) to upload, "
          f"{len(plan.ignored)} left out (training state, logs, scratch)")  # fmt: skip
    if args.dry_run:
        for name in plan.files:
            print(f"   upload  {name}")
        for name in plan.wheels:
            print(f"   upload  {name}  ({args.wheel or 'built from this checkout'}; requirements.txt points at it)")
        for name in plan.ignored:
            print(f"   skip    {name}")
        return 0
    try:
        result = push_folder(
            args.folder,
            args.repo_id,
            private=args.private,
            commit_message=args.message,
            delete_stale=not args.keep_remote_files,
            wheel=args.wheel,
        )
    except HfHubHTTPError as err:
        status = err.response.status_code if err.response is not None else None
        hint = (
            " (log in with `hf auth login` or set HF_TOKEN to a token with write access)"
            if status in (401, 403)
            else ""
        )
        print(f"error: the Hub refused the push of {args.folder} to {args.repo_id}{hint}: {err}", file=sys.stderr)
        return 2
    except (OSError, ValueError, RuntimeError) as err:  # no connection, bad card metadata, a wheel that did not build
        print(f"error: pushing {args.folder} to {args.repo_id} failed: {err}", file=sys.stderr)
        return 2
    if result.deleted:
        print(f">> deleted {len(result.deleted)} remote files the export no longer has: {', '.join(result.deleted)}")
    print(f">> {result}")
    return 0


def _convert(args) -> int:
    """``phrasezoo convert``: the export of a published checkpoint; bad input is one error line (exit code 2)."""
    from phrasezoo.hub.convert import convert_release  # lazy: loads transformers and the model classes

    try:
        output = convert_release(args.method, args.source, args.output, revision=args.revision,
                                 source_repo=args.source_repo, repo_id=args.repo_id, overwrite=args.overwrite)  # fmt: skip
    except (ValueError, FileExistsError, OSError) as err:  # OSError: no such repository, offline without a cache
        print(f"error: converting {args.source} failed: {err}", file=sys.stderr)
        return 2
    print(f">> wrote {output}: load it with AutoModel.from_pretrained({str(output)!r}, trust_remote_code=True)")
    return 0


def _export(args) -> int:
    """``phrasezoo export``: the Hub folder (its card from the results files) or another format (a plugin's)."""
    from phrasezoo.pipeline import card_from_files  # lazy: the card's table needs the optional evaluation dependencies

    cfg = load_recipe(args.config)
    if args.format != "hub":
        if not (cfg.output_dir / "config.json").exists():
            print(
                f"error: {cfg.output_dir} holds no exported model; run `phrasezoo train {cfg.name}`.", file=sys.stderr
            )
            return 2
        output = Path(args.output or f"{cfg.output_dir}-{args.format}")
        try:
            written = plugins(EXPORT_FORMAT_PLUGINS)[args.format].load()(cfg.output_dir, output, args.overwrite)
        except (ValueError, FileExistsError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f">> wrote {written} ({args.format})")
        return 0
    results_path = Path(args.results) if args.results else cfg.results_path
    card = card_from_files(cfg, results_path, [Path(p) for p in args.baseline])
    if args.from_checkpoint:
        found = latest_checkpoint(cfg.output_dir / "checkpoints")
        if found is None:
            print(f"error: no checkpoint under {cfg.output_dir / 'checkpoints'}; train first.", file=sys.stderr)
            return 2
        model = create_model(cfg)
        model.load_state_dict(load_checkpoint(found)[0])
        facts = {"exported from checkpoint": found.name, **finalize_model(cfg, model)}
        export_model(model, cfg.output_dir, cfg, facts=facts, results=card)
    else:
        if not (cfg.output_dir / "config.json").exists():
            print(
                f"error: {cfg.output_dir} holds no exported model; run `phrasezoo train {cfg.name}`.", file=sys.stderr
            )
            return 2
        refresh_card(cfg.output_dir, cfg, card)
    print(f">> wrote {cfg.output_dir}/README.md" + (f" with results from {results_path}" if card else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
