"""Labels of a join's answers, or of one list's pairs, made into a calibration: the session of ``phrasezoo match
label`` and the labels of :func:`phrasezoo.match.calibrate` and :func:`phrasezoo.match.calibrate_dedupe`
(:mod:`phrasezoo.match.model.calibration` holds what the labels become).

A label says whether a query's answer (its top-ranked reference row) names the same thing; in a list (dedupe),
whether a name and its best other row do (each distinct name's top other row as ``dedupe`` scores it with labels:
the join's decision, claims read over the list; a pair is asked once, in either order; docs/experiments/matching.md,
rule 46). The session asks the pair the study measured asking first (rule 35): the answer not asked yet whose
recalibrated probability is nearest, in log-odds, to the current threshold (the highest probability while no
threshold reaches the target), and after every reply refits the shift and reads the threshold again. Replies: y (the
same thing), n (not), s (skip: never asked again, not counted), u (undo the last reply), q (quit, saved; end of
input likewise). After every reply the session file beside the output (``calibration.session.json`` for
``calibration.json``: the replies so far, with what they were given on) and the calibration file are rewritten
atomically; the same command again resumes the session. A large table's pool is a seeded sample of its rows
(:data:`SESSION_SAMPLE`, ``--sample``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from phrasezoo.core.files import atomic_write_text

from ..io.inputs import MAX_CHARS, _is_missing, as_text
from ..model.calibration import Calibration, CalibrationError, decision_digest, expected_precision, logit
from ..model.decision import sampled_rows
from .dedupe import distinct_names, neighbour_pairs
from .matcher import Matcher
from .results import check_target_precision

#: the candidates searched per labelled query, so that a label of its second or third answer finds its probability
LABEL_TOP_K = 10
SESSION_KIND = "phrasezoo.match label session"
SESSION_VERSION = 1
#: how a label may be written (a DataFrame's label column, or a reply in the session); missing values are skips
YES, NO, SKIP = ("y", "yes", "true", "1", "1.0"), ("n", "no", "false", "0", "0.0"), ("", "s", "skip")
LABEL_COLUMNS = ("label", "right_match")
#: a session's pool reads at most this many rows (seeded sample) unless told otherwise: enough to find the pairs
#: nearest the threshold without searching a million-row table before the first question
SESSION_SAMPLE = 20_000


def require_decision(matcher: Matcher) -> dict[str, Any]:
    """The matcher's decision as a dict; a clear error for a matcher whose scores are not its probabilities."""
    decision = getattr(matcher.scorer, "decision", None)
    if decision is None:
        raise CalibrationError(
            f"Calibration needs a matcher whose score is the decision's probability that the answer names the same "
            f"thing (the default 'hybrid', once its decision is fitted); {matcher.name} has no decision, so a few "
            "labels cannot recalibrate its scores. Use the default model (--model hybrid / model='hybrid'), or set a "
            "numeric threshold instead."
        )
    return decision.to_dict()


def check_reference(values: list[str], what: str = "left table") -> None:
    """At least two distinct reference rows: with one, every query gets the same answer and no label says anything
    about the decision."""
    distinct = len(set(values))
    if distinct < 2:
        raise CalibrationError(
            f"The {what} has {distinct} distinct row(s); calibration needs at least two distinct reference rows (with "
            "fewer every query has the same answer, and a label says nothing about the decision). Pass the whole "
            "reference table."
        )


def fingerprint(values: list[str]) -> str:
    """A short fingerprint of a list of strings (which tables a session was made on)."""
    return hashlib.sha256(json.dumps(values, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass
class AnswerPool:
    """Each query row's top answer (``None``: no candidate) and the decision's probability of it (``-inf``: none),
    plus the probabilities of the candidates of the queries named in ``candidates`` (for labels of other ranks)."""

    queries: list[str]
    answers: list[str | None]
    probabilities: np.ndarray
    candidates: dict[str, dict[str, float]] = field(default_factory=dict)

    def probability(self, query: str, answer: str) -> float | None:
        """The decision's probability of ``answer`` for ``query``; ``None`` when it is not among its candidates."""
        return self.candidates.get(query, {}).get(answer)


def answer_pool(matcher: Matcher, queries: list[str], candidates_of: Iterable[str] = ()) -> AnswerPool:
    """Search each distinct query once (its :data:`LABEL_TOP_K` best candidates when it is in ``candidates_of``):
    the top answers in ``queries``' order, duplicates included, as a join over them sees them."""
    distinct = list(dict.fromkeys(queries))
    wanted = set(candidates_of)
    top_k = LABEL_TOP_K if wanted else 1
    scores, ids = matcher.search(distinct, top_k) if distinct else (np.zeros((0, 1)), np.zeros((0, 1), np.int64))
    top: dict[str, tuple[str | None, float]] = {}
    found: dict[str, dict[str, float]] = {}
    for row, query in enumerate(distinct):
        first = int(ids[row, 0])
        top[query] = (matcher.reference[first] if first >= 0 else None, float(scores[row, 0]))
        if query in wanted:
            found[query] = {}
            for score, i in zip(scores[row].tolist(), ids[row].tolist()):
                if i >= 0:
                    found[query].setdefault(matcher.reference[i], score)
    answers = [top[q][0] for q in queries]
    probabilities = np.array([top[q][1] if top[q][0] is not None else -np.inf for q in queries], dtype=np.float32)
    return AnswerPool(list(queries), answers, probabilities, found)


def list_pool(names: list[str], i: np.ndarray, j: np.ndarray, score: np.ndarray,
              rows: np.ndarray | None = None) -> AnswerPool:  # fmt: skip
    """The pool of a list's session: each distinct name (``names``, or its ``rows``) and its top other row, from a
    dedupe search's ``(i, j, score)`` (each name's candidates best first,
    :func:`~phrasezoo.match.engine.dedupe.neighbour_pairs`), with the probabilities of every candidate (for labels
    of other pairs)."""
    top: dict[int, tuple[int, float]] = {}
    found: dict[str, dict[str, float]] = {}
    for a, b, s in zip(np.asarray(i).tolist(), np.asarray(j).tolist(), np.asarray(score).tolist()):
        top.setdefault(a, (b, s))
        found.setdefault(names[a], {}).setdefault(names[b], s)
    rows = np.arange(len(names)) if rows is None else rows
    answers = [names[top[a][0]] if a in top else None for a in rows.tolist()]
    probabilities = np.array([top[a][1] if a in top else -np.inf for a in rows.tolist()], dtype=np.float32)
    return AnswerPool([names[a] for a in rows.tolist()], answers, probabilities, found)


def list_answer_pool(matcher: Matcher, sample: int | None = None, include: Iterable[str] = ()) -> AnswerPool:
    """The pool of a list's session from ``matcher`` fitted on the list's distinct names: each name's (or a seeded
    ``sample`` of them, and the names in ``include``) :data:`LABEL_TOP_K` best other rows of the whole list as
    ``dedupe`` scores them with labels (the join's decision, claims read over the names searched)."""
    names = matcher.reference
    wanted = set(include)
    rows = np.union1d(sampled_rows(len(names), sample), [k for k, name in enumerate(names) if name in wanted])
    rows = rows.astype(np.int64)
    i, j, score = neighbour_pairs(matcher, [names[a] for a in rows.tolist()], rows, LABEL_TOP_K, matcher.progress,
                                  lists=False)  # fmt: skip
    return list_pool(names, i, j, score, rows)


def in_either_order(pool: AnswerPool, rows: list[tuple[str, str, bool | None]]) -> list[tuple[str, str, bool | None]]:
    """Labels of a list's pairs, each turned to the order in which the pool scored it (a pair labelled ``b, a`` that
    the pool found only as ``a``'s candidate is ``a, b``)."""
    return [(b, a, said) if pool.probability(a, b) is None and pool.probability(b, a) is not None else (a, b, said)
            for a, b, said in rows]  # fmt: skip


def calibration_of(matcher_name: str, decision: dict[str, Any], pool: AnswerPool, labels: list[dict[str, Any]],
                   target_precision: float, labels_of: str = "join") -> Calibration:  # fmt: skip
    """The calibration of ``labels`` with the pool's thresholds stored (see :meth:`Calibration.with_cuts`)."""
    calibration = Calibration.from_labels(matcher_name, decision, labels, target_precision, labels_of)
    return calibration.with_cuts(pool.probabilities, pool.queries, pool.answers)


def next_pair(pool: AnswerPool, calibration: Calibration, asked: set[tuple[str, str]], target: float) -> int | None:
    """The row of the pair to ask next (see the module), ``None`` when every answer was asked (a list's pairs in
    either order)."""
    q = calibration.apply(pool.probabilities)
    if calibration.of_list:
        asked = asked | {(a, b) for b, a in asked}
    open_rows = np.array([a is not None and (qq, a) not in asked for qq, a in zip(pool.queries, pool.answers)], bool)
    if not open_rows.any():
        return None
    cut = calibration.cut_for(q, pool.queries, pool.answers, target)
    anchor = cut if np.isfinite(cut) else float(q[np.isfinite(q)].max())
    distance = np.where(open_rows, np.abs(logit(q) - logit(np.array([anchor]))[0]), np.inf)
    return int(np.argmin(distance))


def verdict(value: Any, where: str) -> bool | None:
    """A label as True (the same thing), False (not) or None (skipped); a clear error for anything else."""
    if _is_missing(value):
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    text = str(value).strip().lower()
    if text in YES or text in NO:
        return text in YES
    if text in SKIP:
        return None
    raise CalibrationError(f"{where}: {value!r} is not a label; write y or n (yes/no, true/false, 1/0; empty or s "
                           "for a pair left unlabelled).")  # fmt: skip


def label_rows(labels: Any) -> list[tuple[str, str, bool | None]]:
    """``(right value, left value, label)`` of each labelled row of a DataFrame (or a list of dicts) with columns
    ``right``, ``left`` and ``label`` (or ``right_match``): a join result with a label column added works. Rows with
    neither an answer nor a label (a join's unmatched rows) are left out."""
    records = labels.to_dict(orient="records") if hasattr(labels, "to_dict") else list(labels)
    if not all(isinstance(row, dict) for row in records):
        raise CalibrationError("The labels must be a DataFrame or a list of dicts with the keys right, left, label.")
    columns = set().union(*(row.keys() for row in records)) if records else set()
    column = next((name for name in LABEL_COLUMNS if name in columns), None)
    if not records or column is None or not {"right", "left"} <= columns:
        raise CalibrationError(
            f"The labels need the columns right (the query value), left (its answer) and label (or right_match: y/n, "
            f"True/False); they have: {', '.join(map(str, sorted(columns, key=str))) or 'no rows'}."
        )
    rows = []
    for i, row in enumerate(records):
        said = verdict(row.get(column), f"Label row {i}")
        if _is_missing(row.get("left")) or _is_missing(row.get("right")):
            if said is None:
                continue
            raise CalibrationError(f"Label row {i} has no {'left' if _is_missing(row.get('left')) else 'right'} "
                                   "value; a label judges a pair: a right value and its answer.")  # fmt: skip
        right = as_text(row["right"], "labels", i)[:MAX_CHARS]
        rows.append((right, as_text(row["left"], "labels", i)[:MAX_CHARS], said))
    return rows


def check_known_rows(rows: list[tuple[str, str, bool | None]], right: list[str], left: list[str]) -> None:
    """Refuse labels that name values the tables do not hold (labels of other tables, or of edited values)."""
    for position, values, side in ((0, set(right), "right"), (1, set(left), "left")):
        unknown = list(dict.fromkeys(row[position] for row in rows if row[position] not in values))
        if unknown:
            shown = ", ".join(repr(v) for v in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
            raise CalibrationError(
                f"Unknown rows: {len(unknown)} labelled {side} value(s) are not in the {side} table ({shown}). Label "
                f"pairs of these tables (values as they are in them), or pass the {side} table the labels were made on."
            )


def scored_labels(pool: AnswerPool, rows: list[tuple[str, str, bool | None]]) -> list[dict[str, Any]]:
    """Labels with the decision's probability of their pair; pairs the matcher never proposes (not among the
    query's :data:`LABEL_TOP_K` candidates) are left out with a warning: they say nothing about its answers."""
    labels, seen, outside = [], set(), 0
    for query, answer, said in rows:
        probability = pool.probability(query, answer)
        if probability is None:
            outside += said is not None
            continue
        if (query, answer, said) not in seen:
            seen.add((query, answer, said))
            labels.append({"query": query, "answer": answer, "right": said, "probability": probability})
    if outside:
        warnings.warn(f"{outside} labelled pair(s) are not among the matcher's {LABEL_TOP_K} best candidates for "
                      "their right value; they say nothing about its answers and were left out.", stacklevel=3)  # fmt: skip
    if not any(row["right"] is not None for row in labels):
        raise CalibrationError("No pair among the labels is labelled yes or no; label some pairs (y/n) first.")
    return labels


def check_session(target: Any, budget: Any) -> None:
    """A clear error for a budget that is not a positive whole number or a target outside (0, 1)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"The budget must be a positive whole number of labels, got {budget!r}.")
    check_target_precision(target, "The target precision")


def session_path(output: str | Path) -> Path:
    """Where the session of a calibration file is kept: beside it, its suffix replaced by ``.session.json``."""
    return Path(output).with_suffix(".session.json")


@dataclass
class LabelSession:
    """One labelling session: the pool of answers, the replies so far (skips included, in order) and its files."""

    output: Path
    matcher_name: str
    decision: dict[str, Any]
    pool: AnswerPool
    target: float
    budget: int
    tables: dict[str, str]
    labels: list[dict[str, Any]] = field(default_factory=list)
    resumed: bool = False
    #: what is labelled: a join's answers, or pairs of one list (see :data:`~..model.calibration.LABELS_OF`)
    labels_of: str = "join"
    #: the rows the pool was sampled from (right rows, or the list's distinct names); 0: the pool holds them all
    sampled_from: int = 0

    @classmethod
    def open(cls, output: str | Path, matcher: Matcher, queries: list[str], target: float, budget: int,
             sample: int | None = SESSION_SAMPLE) -> LabelSession:  # fmt: skip
        """A session over ``matcher``'s answers to ``queries`` (a seeded ``sample`` of their rows when there are more;
        None or 0: all), resumed from its session file when there is one."""
        check_session(target, budget)
        decision = require_decision(matcher)
        check_reference(matcher.reference, "reference")
        tables = {"reference": fingerprint(matcher.reference), "queries": fingerprint(list(queries))}
        searched = [queries[row] for row in sampled_rows(len(queries), sample).tolist()]
        session = cls(Path(output), matcher.name, decision, answer_pool(matcher, searched), float(target), budget,
                      tables, sampled_from=len(queries) if len(searched) < len(queries) else 0)  # fmt: skip
        if not any(a is not None for a in session.pool.answers):
            raise CalibrationError("No query has an answer to label (the right table is empty?).")
        session.resume()
        return session

    @classmethod
    def open_list(cls, output: str | Path, matcher: Matcher, names: list[str], target: float, budget: int,
                  sample: int | None = SESSION_SAMPLE) -> LabelSession:  # fmt: skip
        """A session over the pairs of one list (``names``): each distinct name (a seeded ``sample`` of them when
        there are more; None or 0: all) and its top other row of the whole list, as ``dedupe`` scores them with
        labels; ``matcher`` (not fitted yet) is fitted on the list's distinct names here."""
        check_session(target, budget)
        decision = require_decision(matcher)
        distinct, _ = distinct_names(list(names))
        check_reference(distinct, "list")
        pool = list_answer_pool(matcher.fit(distinct), sample)
        sampled_from = len(distinct) if len(pool.queries) < len(distinct) else 0
        session = cls(Path(output), matcher.name, decision, pool, float(target), budget,
                      {"list": fingerprint(distinct)}, labels_of="list", sampled_from=sampled_from)  # fmt: skip
        if not any(a is not None for a in session.pool.answers):
            raise CalibrationError("No name of the list has another row to compare it with.")
        session.resume()
        return session

    @property
    def path(self) -> Path:
        return session_path(self.output)

    @property
    def labelled(self) -> int:
        return sum(row["right"] is not None for row in self.labels)

    def resume(self) -> None:
        """Take the replies of the session file, when it was made on the same tables, matcher and decision."""
        if not self.path.is_file():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as err:
            raise CalibrationError(f"{self.path}: cannot read the session ({err}); delete it to start again.") from err
        mine = {"kind": SESSION_KIND, "format_version": SESSION_VERSION, "matcher": self.matcher_name,
                "decision": decision_digest(self.decision), "labels_of": self.labels_of, **self.tables}  # fmt: skip
        if isinstance(data, dict) and data.get("labels_of") is None:
            data = {**data, "labels_of": "join"}  # sessions written before lists had sessions labelled joins
        differ = [key for key, value in mine.items() if not isinstance(data, dict) or data.get(key) != value]
        if differ:
            raise CalibrationError(
                f"{self.path} is a session of other {'tables' if set(differ) <= set(self.tables) else 'inputs'} "
                f"(its {', '.join(differ)} differ). Pass the tables and model it was made on to resume it, or delete "
                "it (or choose another --output) to start again."
            )
        self.labels, self.resumed = list(data.get("labels") or []), True

    def calibration(self) -> Calibration:
        return calibration_of(self.matcher_name, self.decision, self.pool, self.labels, self.target, self.labels_of)

    def reply(self, row: int, said: bool | None) -> None:
        self.labels.append({"query": self.pool.queries[row], "answer": self.pool.answers[row], "right": said,
                            "probability": float(self.pool.probabilities[row])})  # fmt: skip

    def save(self) -> Calibration:
        """Rewrite the session file and the calibration file (each atomically); returns the calibration."""
        document = {"kind": SESSION_KIND, "format_version": SESSION_VERSION, "matcher": self.matcher_name,
                    "decision": decision_digest(self.decision), "labels_of": self.labels_of, **self.tables,
                    "target_precision": self.target, "labels": self.labels}  # fmt: skip
        atomic_write_text(self.path, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        calibration = self.calibration()
        calibration.save(self.output)
        return calibration

    def progress(self, calibration: Calibration) -> str:
        """``12 of 50 labelled; threshold now 0.87, expected precision 0.91`` for the current labels."""
        q = calibration.apply(self.pool.probabilities)
        cut = calibration.cut_for(q, self.pool.queries, self.pool.answers, self.target)
        skipped = len(self.labels) - self.labelled
        head = f"{self.labelled} of {self.budget} labelled" + (f" ({skipped} skipped)" if skipped else "")
        if not math.isfinite(cut):
            return f"{head}; no threshold reaches precision {self.target:.2f} yet"
        known, right = calibration.known(self.pool.queries, self.pool.answers)
        return f"{head}; threshold now {cut:.2f}, expected precision {expected_precision(q, known, right, cut):.2f}"


PROMPT = "same thing? [y]es / [n]o / [s]kip / [u]ndo / [q]uit: "
#: what the session reads as each reply
REPLIES = {word: word[0] for word in ("y", "yes", "n", "no", "s", "skip", "u", "undo", "q", "quit")}


def read_reply(stdin: TextIO, stdout: TextIO) -> str:
    """One of y, n, s, u, q from ``stdin`` (asked again on anything else); end of input is q."""
    while True:
        stdout.write(PROMPT)
        stdout.flush()
        line = stdin.readline()
        if not line:
            stdout.write("\n")
            return "q"
        reply = REPLIES.get(line.strip().lower())
        if reply is not None:
            return reply
        stdout.write("answer y (the same thing), n (not), s (skip), u (undo the last answer) or q (quit, saved)\n")


def show_pair(session: LabelSession, calibration: Calibration, row: int) -> str:
    """The pair asked: its query, its answer, its score and the score recalibrated by the labels so far."""
    head = f"[{session.labelled + 1} of {session.budget}] "
    recalibrated = float(calibration.apply(session.pool.probabilities[row : row + 1])[0])
    first, second = ("name:  ", "other: ") if session.labels_of == "list" else ("query:  ", "answer: ")
    return (f"\n{head}{first}{session.pool.queries[row]!r}\n{' ' * len(head)}{second}{session.pool.answers[row]!r}  "
            f"(score {session.pool.probabilities[row]:.3f}, recalibrated {recalibrated:.3f})")  # fmt: skip


def run_session(session: LabelSession, stdin: TextIO, stdout: TextIO) -> int:
    """The conversation: ask, record, save and report until the budget is reached, every answer is asked or the
    user quits; returns the exit status (0)."""
    say = functools.partial(print, file=stdout, flush=True)
    if session.resumed:
        say(f">> resuming {session.path}: {session.labelled} labelled, {len(session.labels) - session.labelled} "
            "skipped so far")  # fmt: skip
    answered = sum(a is not None for a in session.pool.answers)
    if session.sampled_from:
        say(
            f">> the pairs come from a seeded sample of {len(session.pool.queries):,} of the "
            f"{session.sampled_from:,} {'distinct names' if session.labels_of == 'list' else 'right rows'} (--sample)"
        )
    if session.labels_of == "list":
        say(f">> {answered} of the list's {len(session.pool.queries)} distinct names have another row to compare; "
            f"target precision {session.target:.2f}; at most {session.budget} labels. For each pair: do the two "
            "rows name the same thing?")  # fmt: skip
    else:
        say(f">> {answered} of {len(session.pool.queries)} right rows have an answer; target precision "
            f"{session.target:.2f}; at most {session.budget} labels. For each pair: is the answer the same thing as "
            "the query?")  # fmt: skip
    calibration = session.calibration()
    while session.labelled < session.budget:
        row = next_pair(session.pool, calibration, {(r["query"], r["answer"]) for r in session.labels}, session.target)
        if row is None:
            say(">> every answer has been asked")
            break
        say(show_pair(session, calibration, row))
        reply = read_reply(stdin, stdout)
        if reply == "q":
            break
        if reply != "u":
            session.reply(row, {"y": True, "n": False, "s": None}[reply])
        elif session.labels:
            undone = session.labels.pop()
            say(f">> undone: {undone['query']!r} -> {undone['answer']!r}")
        calibration = session.save()
        say(">> " + session.progress(calibration))
    if session.labels:
        calibration = session.save()  # a resumed session under a new target or budget: its file says so
    say(f">> {session.progress(calibration)}; log-odds shift {calibration.shift:+.2f}")
    if not session.output.is_file():
        say(">> nothing labelled yet: no file written")
        return 0
    uses = "dedupe" if session.labels_of == "list" else "join|link|apply|dedupe"
    say(f">> wrote {session.output} (its session: {session.path}; the same command resumes it)\n>> use it: "
        f"phrasezoo match {uses} ... --threshold auto --calibration {session.output}")  # fmt: skip
    return 0
