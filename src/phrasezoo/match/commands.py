"""``phrasezoo match join|link|dedupe|fit|apply|label`` (also ``python -m phrasezoo.match``): fuzzy joins, entity
linking and deduplication over CSV files, and the labels that calibrate them."""

from __future__ import annotations

import argparse
import sys
import warnings

from .api import join, link
from .engine.blocking import SCHEMES
from .engine.dedupe import dedupe
from .engine.estimate import describe, estimate_of, merge_tallies, plot_estimate
from .engine.labelling import SESSION_SAMPLE, LabelSession, check_reference, require_decision, run_session
from .engine.matcher import Matcher
from .io.inputs import MissingValuesError, as_column, as_kb
from .io.streaming import stream_matches
from .io.tables import DEFAULT_CHUNK_ROWS, iter_table, read_table, write_table
from .model.calibration import Calibration, read_calibration
from .scoring.index import INDEX_TYPES
from .scoring.scorers import DEFAULT_MODEL, RAPIDFUZZ_SCORERS

EPILOG = f"""models (--model):
  hybrid                    the default: all-MiniLM-L6-v2 (embedded offline) + character/word TF-IDF + number and
                            acronym clues, combined by a model learned on five domains' dev splits; scores are match
                            probabilities, so --threshold auto works
  hybrid:pearl-mini         the same on pearl-mini (after `bash scripts/run_main.sh` has trained it), with its own
                            learned combination and calibration: better on names than the default on dev
  hybrid:<encoder>          the same with another encoder (an exported zoo folder, baseline:<hub id or path>)
  baseline:minilm-l6        raw all-MiniLM-L6-v2 cosine (mean pooling)
  outputs/pearl-mini        an exported zoo folder, or a recipe name such as pearl-mini (cosine)
  tfidf:char, tfidf:word    TF-IDF cosine over character 2-4 grams (as PolyFuzz / skrub) or words
  rapidfuzz:<scorer>        string similarity without embeddings: {", ".join(RAPIDFUZZ_SCORERS)}

thresholds (--threshold): a number drops matches scoring below it; 'auto' keeps the matches of the default model
  that reached --target-precision (default 0.9) on five domains' dev splits, so rows it is unsure of stay unmatched,
  and says on stderr what this join's own scores expect of it (--plot FILE draws it). Every input row is accounted
  for: written, or counted as unmatched / skipped on stderr.

a few labels (--calibration FILE): `phrasezoo match label` asks about the pairs the default model is least sure of
  and writes a calibration file; with it the scores are recalibrated to your data and --threshold auto uses the
  threshold the labelled join gave --target-precision (one threshold for every chunk of a streamed file). Pairs you
  labelled are kept or dropped as you said, whatever the threshold. For dedupe, label one list's pairs (--input).

examples:
  phrasezoo match join --left companies.csv --right invoices.csv --left-column name --right-column vendor \\
      --threshold auto --output joined.csv
  phrasezoo match link --mentions mentions.csv --kb kb.csv --kb-name-column name --kb-id-column qid --top-k 3 \\
      --output links.csv
  phrasezoo match dedupe --input customers.csv --column name --method average --output clusters.csv
  phrasezoo match label --left companies.csv --right invoices.csv --left-column name --right-column vendor \\
      --output calibration.json
  phrasezoo match join ... --threshold auto --calibration calibration.json
  phrasezoo match label --input customers.csv --column name --output list.json   # then: dedupe ... --calibration
"""


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"what scores pairs (default {DEFAULT_MODEL}; see below)"
    )
    parser.add_argument("--top-k", type=int, default=1, help="matches per row (default 1)")
    parser.add_argument("--threshold", type=_threshold, help="drop matches scoring below this number, or 'auto'")
    parser.add_argument("--target-precision", type=float, default=0.9,
                        help="precision --threshold auto aims at (default 0.9)")  # fmt: skip
    parser.add_argument("--encoding", default="utf-8", help="text encoding of the input files (default utf-8)")
    parser.add_argument("--blocking", choices=SCHEMES, help="only compare rows sharing a key (large tables)")
    parser.add_argument("--index", choices=INDEX_TYPES, default="auto", help="faiss index (default: auto)")
    parser.add_argument("--keep-unmatched", action="store_true", help="write rows without a match too")
    parser.add_argument("--skip-missing", action="store_true", help="skip empty cells instead of failing")
    parser.add_argument("--batch-size", type=int, help="encoder batch size")
    parser.add_argument("--chunk-rows", type=int, default=DEFAULT_CHUNK_ROWS,
                        help="read and match the right/mentions table this many rows at a time, appending to the "
                        f"output, so a file larger than memory works (default {DEFAULT_CHUNK_ROWS:,}); the default "
                        "matcher's decision compares the rows of a chunk that share an answer")  # fmt: skip
    parser.add_argument(
        "--output", "-o", required=True, help="output file (.csv, .tsv, .parquet, .jsonl) or - for stdout"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    _calibration_arguments(parser)


def _calibration_arguments(parser: argparse.ArgumentParser) -> None:
    """``--calibration`` and ``--plot``: what join, link, apply and dedupe take from labels and give of the estimate."""
    parser.add_argument("--calibration", metavar="FILE",
                        help="a calibration file from `phrasezoo match label` (labels of the default model's answers "
                        "on your data): scores recalibrated, --threshold auto set from the labelled join")  # fmt: skip
    parser.add_argument("--no-honour-labels", action="store_true",
                        help="with --calibration: the threshold alone decides (by default an answer you labelled "
                        "wrong is never returned or linked directly, and one you labelled right is kept below the "
                        "threshold; without that, precision lands nearer the target)")  # fmt: skip
    parser.add_argument("--plot", metavar="FILE.png",
                        help="with --threshold auto: draw the estimated precision, recall and share kept against the "
                        "threshold (from the scores themselves) into this PNG")  # fmt: skip


def _threshold(value: str) -> float | str:
    if value == "auto":
        return value
    try:
        return float(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {value!r}") from err


#: how every ``match`` parser ends: the models and thresholds epilog, kept as written
TEXT = {"epilog": EPILOG, "formatter_class": argparse.RawDescriptionHelpFormatter}
DESCRIPTION = "Fuzzy joins and entity linking with a zoo model (or rapidfuzz) over a faiss index."


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``match`` command (with ``join`` and ``link``) to a parent CLI's subparsers."""
    about = "fuzzy-join two CSV tables, link mentions to a knowledge base or deduplicate one table"
    match = subparsers.add_parser("match", help=about, description=DESCRIPTION, **TEXT)
    build_arguments(match)
    match.set_defaults(func=run)
    return match


#: ``join`` and ``link``: their table arguments (flag, required, help); the matching options are :func:`_common`'s
TABLE_ARGUMENTS = {
    "join": ("match each right-table row to its most similar left-table rows", (
        ("--left", True, "reference table (CSV/TSV/parquet)"),
        ("--right", True, "table whose rows are matched to the left table"),
        ("--left-column", False, "text column of the left table (needed when it has several columns)"),
        ("--right-column", False, "text column of the right table"),
    )),
    "link": ("link mentions to knowledge-base entities by name", (
        ("--mentions", True, "table of mentions (CSV/TSV/parquet)"),
        ("--mention-column", False, "text column of the mentions table"),
        ("--kb", True, "knowledge base table: one row per name (aliases repeat the id)"),
        ("--kb-name-column", False, "column of entity names (default: name)"),
        ("--kb-id-column", False, "column of entity ids (default: id when present, else the row number)"),
    )),
}  # fmt: skip


def _subcommand(sub, name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
    """One ``match`` subcommand's parser, with the models and thresholds epilog."""
    return sub.add_parser(name, help=help, description=description, **TEXT)


def build_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="match_command", required=True, metavar="{join,link,dedupe,fit,apply,label}")
    for name, (about, arguments) in TABLE_ARGUMENTS.items():
        command = _subcommand(sub, name, about)
        for flag, required, text in arguments:
            command.add_argument(flag, required=required, help=text)
        _common(command)
    _dedupe_arguments(sub)
    _fit_and_apply_arguments(sub)
    _label_arguments(sub)


def _dedupe_arguments(sub) -> None:
    dedupe = _subcommand(sub, "dedupe", "cluster the rows of one table that name the same entity")
    dedupe.add_argument("--input", required=True, help="table to deduplicate (CSV/TSV/parquet)")
    dedupe.add_argument("--column", help="text column (needed when the table has several columns)")
    dedupe.add_argument("--model", default=DEFAULT_MODEL, help=f"what scores pairs (default {DEFAULT_MODEL})")
    dedupe.add_argument("--threshold", type=_threshold, default="auto",
                        help="link two rows when their score reaches this number, or 'auto' (default)")  # fmt: skip
    dedupe.add_argument("--target-precision", type=float, default=0.9, help="precision --threshold auto aims at")
    dedupe.add_argument("--method", choices=("components", "average"), default="components",
                        help="connected components of the linked pairs (default) or average linkage (stricter on "
                        "chains)")  # fmt: skip
    dedupe.add_argument("--top-k", type=int, default=10, help="neighbours searched per distinct name (default 10)")
    dedupe.add_argument("--index", choices=INDEX_TYPES, default="auto", help="faiss index (default: auto)")
    dedupe.add_argument("--skip-missing", action="store_true", help="leave empty cells unclustered instead of failing")
    dedupe.add_argument("--encoding", default="utf-8", help="text encoding of the input file (default utf-8)")
    dedupe.add_argument("--batch-size", type=int, help="encoder batch size")
    dedupe.add_argument("--output", "-o", required=True,
                        help="output file (.csv, .tsv, .parquet, .jsonl) or -: the input table with cluster and "
                        "cluster_size columns (empty for skipped rows)")  # fmt: skip
    dedupe.add_argument("--no-progress", action="store_true", help="no progress bars")
    _calibration_arguments(dedupe)


def _fit_and_apply_arguments(sub) -> None:
    fit = _subcommand(sub, "fit", "fit a matcher on a reference table once and save it (matcher.json + .safetensors)")
    fit.add_argument("--reference", required=True, help="reference table: the canonical names (CSV/TSV/parquet)")
    fit.add_argument("--column", help="text column of the reference table")
    fit.add_argument("--id-column", help="column whose values are reported as left_index (default: the row number)")
    fit.add_argument("--model", default=DEFAULT_MODEL, help=f"what scores pairs (default {DEFAULT_MODEL})")
    fit.add_argument("--blocking", choices=SCHEMES, help="only compare rows sharing a key (large tables)")
    fit.add_argument("--index", choices=INDEX_TYPES, default="auto", help="faiss index (default: auto)")
    fit.add_argument("--encoding", default="utf-8", help="text encoding of the input file (default utf-8)")
    fit.add_argument("--batch-size", type=int, help="encoder batch size")
    fit.add_argument("--output", "-o", required=True, help="folder to save the fitted matcher in")
    fit.add_argument("--no-progress", action="store_true", help="no progress bars")
    apply = _subcommand(sub, "apply", "match a table of new names with a saved matcher (no re-encoding)")
    apply.add_argument("--matcher", required=True, help="folder written by `match fit`")
    apply.add_argument("--queries", required=True, help="table of names to match (CSV/TSV/parquet)")
    apply.add_argument("--column", help="text column of the queries table")
    apply.add_argument("--top-k", type=int, default=1, help="matches per row (default 1)")
    apply.add_argument("--threshold", type=_threshold, help="drop matches scoring below this number, or 'auto'")
    apply.add_argument("--target-precision", type=float, default=0.9, help="precision --threshold auto aims at")
    apply.add_argument("--keep-unmatched", action="store_true", help="write rows without a match too")
    apply.add_argument("--skip-missing", action="store_true", help="skip empty cells instead of failing")
    apply.add_argument("--encoding", default="utf-8", help="text encoding of the input file (default utf-8)")
    apply.add_argument(
        "--chunk-rows",
        type=int,
        default=DEFAULT_CHUNK_ROWS,
        help=f"read and match the queries this many rows at a time (default {DEFAULT_CHUNK_ROWS:,})",
    )
    apply.add_argument("--output", "-o", required=True, help="output file (.csv, .tsv, .parquet, .jsonl) or -")
    apply.add_argument("--no-progress", action="store_true", help="no progress bars")
    _calibration_arguments(apply)


LABEL_ABOUT = "label the pairs the default model is least sure of (y/n in the terminal) and write a calibration file"
LABEL_HELP = """Label a few pairs of a join (or of one list, for dedupe), and write a calibration file that fits the
default model to your data.

The default model is fitted on the left table (or the knowledge base) and answers every right row (mention). The
pairs are shown one at a time, the one the current calibration is least sure of first (the answer whose probability
is nearest the threshold for --target-precision); reply y (the same thing), n (not), s (skip), u (undo the last
reply) or q (quit; end of input too). After every reply the replies so far are saved beside the output
(calibration.session.json for --output calibration.json: run the same command again to resume) and the
calibration file is rewritten: the labels, the shift they give the model's probabilities, and the labelled join's
threshold per target precision. Replies are read from standard input, so a file of replies can be piped in. About
50 labels are enough (--budget).

Then: phrasezoo match join|link|apply|dedupe ... --threshold auto --calibration <output>. A calibration made with
another model, another decision or another file version is refused.

With --input (and --column) the pairs are those of one list, as dedupe scores them with labels: each distinct name
and its best other row, asked once in either order. That calibration is for phrasezoo match dedupe only.
"""


def _label_arguments(sub) -> None:
    label = _subcommand(sub, "label", LABEL_ABOUT, LABEL_HELP)
    for flag, text in (("--left", "reference table of a join (CSV/TSV/parquet)"),
                       ("--right", "table whose rows are matched to the left table"),
                       ("--left-column", "text column of the left table"),
                       ("--right-column", "text column of the right table"),
                       ("--kb", "or a knowledge base (one row per name), for link"),
                       ("--kb-name-column", "column of entity names (default: name)"),
                       ("--kb-id-column", "column of entity ids"),
                       ("--mentions", "the mentions linked to --kb"),
                       ("--mention-column", "text column of the mentions table"),
                       ("--input", "or one list, for dedupe: the pairs of its rows"),
                       ("--column", "text column of --input")):  # fmt: skip
        label.add_argument(flag, help=text)
    label.add_argument("--model", default=DEFAULT_MODEL, help=f"the matcher labelled (default {DEFAULT_MODEL})")
    label.add_argument("--target-precision", type=float, default=0.9,
                       help="precision the threshold aims at; pairs near it are asked first (default 0.9)")  # fmt: skip
    label.add_argument("--budget", type=int, default=50, help="labels to give, skips not counted (default 50)")
    label.add_argument("--sample", type=int, default=SESSION_SAMPLE,
                       help=f"ask about a seeded sample of this many right rows (or names of --input) when there "
                       "are more: a large table is not searched whole before the first question (default "
                       f"{SESSION_SAMPLE:,}; 0: every row)")  # fmt: skip
    label.add_argument("--encoding", default="utf-8", help="text encoding of the input files (default utf-8)")
    label.add_argument("--skip-missing", action="store_true", help="skip empty cells instead of failing")
    label.add_argument("--batch-size", type=int, help="encoder batch size")
    label.add_argument("--output", "-o", required=True, help="the calibration file to write (JSON)")
    label.add_argument("--no-progress", action="store_true", help="no progress bars")


def _fit(args: argparse.Namespace) -> int:
    """``match fit``: fit a matcher on the reference table and save it."""
    table = read_table(args.reference, args.encoding)
    column = as_column(table, args.column, what="reference")
    labels = column.labels
    if args.id_column is not None:
        if args.id_column not in table.columns:
            raise ValueError(f"The reference has no column {args.id_column!r}; columns: {', '.join(table.columns)}.")
        labels = list(table[args.id_column].iloc[column.positions])
    matcher = Matcher(args.model, index=args.index, blocking=args.blocking, batch_size=args.batch_size,
                      progress=not args.no_progress).fit(column.values, labels)  # fmt: skip
    matcher.save(args.output)
    print(f">> saved a {matcher.name} matcher over {len(column)} names to {args.output}", file=sys.stderr)
    return 0


def _matching(args: argparse.Namespace):
    """``(query file, function matching one chunk of it)`` for ``join``, ``link`` and ``apply``: the reference is
    read, the matcher fitted (or loaded) and the calibration read and checked once, here."""
    options = {"top_k": args.top_k, "threshold": args.threshold, "target_precision": args.target_precision,
               "keep_unmatched": args.keep_unmatched, "on_missing": "skip" if args.skip_missing else "raise"}  # fmt: skip
    # read once; a list's labels fail here, before the reference is encoded
    calibration = _read_calibration(args)
    if args.match_command == "apply":
        fitted = Matcher.load(args.matcher, progress=not args.no_progress)

        def match(chunk, **given):
            name = as_column(chunk, args.column, what="queries", on_missing="skip", allow_empty=True).name
            return fitted.transform(chunk[name], **given)

        path = args.queries
    else:
        build = {"model": args.model, "index": args.index, "blocking": args.blocking, "batch_size": args.batch_size,
                 "progress": not args.no_progress}  # fmt: skip
        if args.match_command == "join":
            left = read_table(args.left, args.encoding)
            reference = as_column(left, args.left_column, what="left", on_missing=options["on_missing"])
            fitted = Matcher(**build).fit(reference.values, reference.labels)
            path, match = args.right, lambda chunk, **given: join(left, chunk, left_column=args.left_column,
                                                                  right_column=args.right_column, matcher=fitted,
                                                                  **given)  # fmt: skip
        else:
            kb = read_table(args.kb, args.encoding)
            names, ids = as_kb(kb, args.kb_name_column, args.kb_id_column, on_missing=options["on_missing"])
            fitted = Matcher(**build).fit(names.values, ids)
            path, match = args.mentions, lambda chunk, **given: link(chunk, kb, mention_column=args.mention_column,
                                                                     matcher=fitted, kb_name_column=args.kb_name_column,
                                                                     kb_id_column=args.kb_id_column, **given)  # fmt: skip
    options["calibration"] = _calibration(args, fitted, calibration)
    return path, lambda chunk: match(chunk, **options)


def _read_calibration(args: argparse.Namespace, dedupe: bool = False) -> Calibration | None:
    """The ``--calibration`` file, read and checked for its use (a list's labels fail for a join before the reference
    is encoded); with ``--no-honour-labels``, its threshold alone decides."""
    if args.calibration is None:
        if args.no_honour_labels:
            print(">> --no-honour-labels does nothing without --calibration", file=sys.stderr)
        return None
    calibration = read_calibration(args.calibration).check_use(dedupe)
    return calibration.threshold_alone() if args.no_honour_labels else calibration


def _calibration(args: argparse.Namespace, matcher: Matcher, calibration: Calibration | None):
    """The ``--calibration`` file (read), checked against the matcher; with ``--threshold auto`` its stored threshold
    serves every chunk (the CLI streams its input: a threshold read from one chunk would differ from the next's)."""
    if calibration is None:
        return None
    decision = getattr(matcher.scorer, "decision", None)
    calibration.check_matcher(matcher.name, decision.to_dict() if decision is not None else None)
    if args.threshold == "auto":
        calibration.use_stored_cuts = True
        calibration.stored_cut(args.target_precision)  # a target outside the file's range fails now, not per chunk
    return calibration


class Tallied:
    """A chunk matcher that adds up its chunks' estimate tallies (``tally``): the whole file's estimate, not its last
    chunk's."""

    def __init__(self, match) -> None:
        self.match, self.tally = match, None

    def __call__(self, chunk):
        frame = self.match(chunk)
        if "estimate_tally" in frame.attrs:
            self.tally = merge_tallies(self.tally, frame.attrs["estimate_tally"])
        return frame


def _estimate_lines(report: dict, args: argparse.Namespace, what: str = "queries") -> None:
    """The estimate on stderr and, with ``--plot``, its PNG (a note when there is none to draw)."""
    tally = report.get("estimate_tally")
    if tally is not None:
        print(f">> estimate: {describe(report['estimate'], what)}", file=sys.stderr)
    if args.plot is None:
        return
    if tally is None:
        print(">> --plot: no estimate to draw (it needs --threshold auto and a model whose scores are probabilities, "
              "the default hybrid with its decision)", file=sys.stderr)  # fmt: skip
        return
    labels = (report.get("calibration") or {}).get("labels")
    title = f"What the {what}' own scores expect of the threshold" + (
        f" (recalibrated by {labels} labels)" if labels else " (no labels)")  # fmt: skip
    plot_estimate(tally, tally["threshold"], args.plot, title=title)
    print(f">> wrote the estimate's plot to {args.plot}", file=sys.stderr)


def _dedupe(args: argparse.Namespace) -> int:
    """``match dedupe``: the input table with ``cluster`` and ``cluster_size`` columns; the report on stderr."""
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help'

    try:
        table = read_table(args.input, args.encoding)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # skipped rows are reported below instead
            found = dedupe(table.reset_index(drop=True), args.model, args.threshold, column=args.column,
                           method=args.method, top_k=args.top_k, target_precision=args.target_precision,
                           on_missing="skip" if args.skip_missing else "raise", index=args.index,
                           batch_size=args.batch_size, progress=not args.no_progress,
                           calibration=_read_calibration(args, dedupe=True))  # fmt: skip
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    frame = table.reset_index(drop=True)
    for name in ("cluster", "cluster_size"):
        if name in frame.columns:
            print(f"error: the input has a column {name!r} already; rename it first.", file=sys.stderr)
            return 2
        frame[name] = pd.Series(found[name], dtype="Int64").reindex(frame.index)
    write_table(frame, args.output)
    report = found.attrs["report"]
    if args.output != "-":
        print(f">> wrote {len(frame)} rows to {args.output}", file=sys.stderr)
    threshold = report["threshold"]
    print(f">> {report['clusters']} clusters of {report['rows_clustered']} rows (method {report['method']}"
          + (f", threshold {threshold:.4f}" if threshold is not None else "") + f"); largest cluster "
          f"{report['largest_cluster']} rows ({100 * report['largest_share']:.1f}%); clusters by size: "
          f"{report['clusters_by_size']}", file=sys.stderr)  # fmt: skip
    if report["skipped"]:
        print(f">> {report['rows_skipped']} row(s) with missing values left unclustered (empty cluster): "
              f"{report['skipped'][:10]}", file=sys.stderr)  # fmt: skip
    _estimate_lines(report, args, "pairs")
    return 0


def _label_tables(args: argparse.Namespace):
    """The reference (left table or KB names) and the queries (right table or mentions) of ``match label``; for a
    list (``--input``), ``(None, its column)``."""
    missing = "skip" if args.skip_missing else "raise"
    tables = {"--left": args.left, "--right": args.right, "--kb": args.kb, "--mentions": args.mentions}
    if args.input is not None:
        if any(value is not None for value in tables.values()):
            given = ", ".join(flag for flag, value in tables.items() if value is not None)
            raise ValueError(f"phrasezoo match label labels one list (--input) or the tables of a join or a link, not "
                             f"both: drop {given} or --input.")  # fmt: skip
        return None, as_column(read_table(args.input, args.encoding), args.column, what="input", on_missing=missing,
                               allow_empty=True)  # fmt: skip
    if args.kb is not None and args.mentions is not None and args.left is None and args.right is None:
        names, _ = as_kb(read_table(args.kb, args.encoding), args.kb_name_column, args.kb_id_column, missing)
        mentions = read_table(args.mentions, args.encoding)
        return names, as_column(mentions, args.mention_column, what="mentions", on_missing=missing, allow_empty=True)
    if args.left is None or args.right is None or args.kb is not None or args.mentions is not None:
        raise ValueError("phrasezoo match label needs --left and --right (the tables of a join), --kb and --mentions "
                         "(those of a link), or --input (one list, for dedupe); one of them.")  # fmt: skip
    left, right = read_table(args.left, args.encoding), read_table(args.right, args.encoding)
    reference = as_column(left, args.left_column, what="left", on_missing=missing, allow_empty=True)
    return reference, as_column(right, args.right_column, what="right", on_missing=missing, allow_empty=True)


def _label(args: argparse.Namespace) -> int:
    """``match label``: fit the matcher, then ask about its answers on stdin (see ``LABEL_HELP``)."""
    try:
        reference, queries = _label_tables(args)
        matcher = Matcher(args.model, batch_size=args.batch_size, progress=not args.no_progress)
        if reference is None:  # one list
            session = LabelSession.open_list(args.output, matcher, queries.values, args.target_precision, args.budget,
                                             args.sample)  # fmt: skip
        else:
            check_reference(reference.values, "left table" if args.left is not None else "KB")
            require_decision(matcher)  # before the reference is encoded
            matcher.fit(reference.values)
            session = LabelSession.open(args.output, matcher, queries.values, args.target_precision, args.budget,
                                        args.sample)  # fmt: skip
    except MissingValuesError as err:
        print(f"error: {err.describe(fix='pass --skip-missing')}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        return run_session(session, sys.stdin, sys.stdout)
    except KeyboardInterrupt:  # every reply is saved as it is given: nothing is lost
        print(f"\n>> interrupted; the replies so far are in {session.path} (the same command resumes)", file=sys.stderr)
        return 130


def run(args: argparse.Namespace) -> int:
    if args.match_command == "dedupe":
        return _dedupe(args)
    if args.match_command == "label":
        return _label(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # skipped rows are reported below instead
            if args.match_command == "fit":
                return _fit(args)
            if args.chunk_rows < 1:  # before the matcher is fitted
                raise ValueError(f"--chunk-rows must be a positive whole number, got {args.chunk_rows}.")
            path, match = _matching(args)
            match = Tallied(match)
            report = stream_matches(iter_table(path, args.encoding, args.chunk_rows), match, args.output)
            if match.tally is not None:
                report["estimate_tally"] = match.tally
                report["estimate"] = estimate_of(
                    match.tally, report.get("target_precision"), args.calibration is not None
                )
    except MissingValuesError as err:  # the library's fix names its argument; on the command line it is a flag
        print(f"error: {err.describe(fix='pass --skip-missing (skipped rows are reported)')}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    _report(report, args)
    return 0


def _report(report: dict, args: argparse.Namespace) -> None:
    """Say on stderr what is not in the output (threshold, unmatched and skipped rows): every input row is in the
    output or in this report."""
    if args.output != "-":
        print(f">> wrote {report['rows_written']} rows to {args.output} ({report['rows_read']} rows read)",
              file=sys.stderr)  # fmt: skip
    if report.get("threshold") is not None:
        source = "the calibration file's labelled join" if "calibration" in report else "the dev domains"
        print(f">> threshold {report['threshold']:.4f}" + (
            f" (auto: target precision {report['target_precision']:.2f} on {source})"
            if "target_precision" in report else ""), file=sys.stderr)  # fmt: skip
    if report["unmatched"] and not args.keep_unmatched:
        print(f">> {len(report['unmatched'])} row(s) had no match above the threshold (not written; "
              "--keep-unmatched writes them)", file=sys.stderr)  # fmt: skip
    for table, labels in report["skipped"].items():
        print(f">> skipped {len(labels)} {table} row(s) with missing values: {labels[:10]}", file=sys.stderr)
    _estimate_lines(report, args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m phrasezoo.match", description=DESCRIPTION, **TEXT)
    build_arguments(parser)
    return run(parser.parse_args(argv))
