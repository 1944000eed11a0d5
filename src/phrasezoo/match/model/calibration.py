"""A few labels, when the user has them: the decision recalibrated to one join, saved as a calibration file.

The decision's probabilities were learned on other names; a join of another kind can be more or less certain than
they say. Labelled answers of this join (is this answer the same thing as the query, yes or no) fit one number, a
shift of the decision's log-odds (``sigmoid(logit p + shift)``), by its most probable value under a prior centred on
the decision as it is: a handful of labels moves it only as far as they show. The threshold for a target precision is
then read from the join itself: the lowest score whose kept answers are expected to reach the target, the labelled
ones counting as labelled and the others by their recalibrated probability (docs/experiments/matching.md, rule 35).

A calibration file (JSON) holds the labels and the shift, and names the matcher and the decision they were made with:
another matcher or decision is refused, since the shift means nothing on other scores. It also holds ``cuts``: the
threshold the labelled join itself gives each target precision (:data:`CUT_TARGETS`). A join that sees its queries
in chunks (the CLI streams its input) cannot read its threshold from the whole join, so it uses these
(``use_stored_cuts``): one threshold whatever the chunking. Written by ``phrasezoo match label`` and
:func:`phrasezoo.match.calibrate`; read by ``--calibration`` and ``calibration=``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from phrasezoo.core.files import atomic_write_text

FORMAT_VERSION = 1
KIND = "phrasezoo.match calibration"
#: what a calibration's labels judged: a join's (or a link's) answers, or pairs of one list's rows (a session over a
#: list, ``phrasezoo match label --input``: a pair labelled in either order; it calibrates dedupe only)
LABELS_OF = ("join", "list")
#: the prior's standard deviation of the log-odds shift: a shift of 1.5 (odds x 4.5) is one standard deviation
PRIOR_SCALE = 1.5
#: the target precisions whose threshold a calibration file keeps (besides the one it was labelled for)
CUT_TARGETS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99)


class CalibrationError(ValueError):
    """A calibration file or a set of labels this matcher cannot use; the message says what to do."""


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def fit_shift(probabilities: np.ndarray, right: np.ndarray, prior_scale: float = PRIOR_SCALE) -> float:
    """The most probable log-odds shift given labelled answers (their decision probabilities and whether they were
    right), under a Gaussian prior N(0, ``prior_scale``): Newton steps on a one-dimensional concave objective."""
    x = logit(probabilities)
    y = np.asarray(right, dtype=np.float64)
    shift = 0.0
    for _ in range(200):
        q = 1.0 / (1.0 + np.exp(-(x + shift)))
        step = (np.sum(q - y) + shift / prior_scale**2) / (np.sum(q * (1 - q)) + 1.0 / prior_scale**2)
        step = float(np.clip(step, -1.0, 1.0))  # damped: an undamped Newton step oscillates on flat tails
        shift -= step
        if abs(step) < 1e-10:
            break
    return float(shift)


def shifted(probabilities: np.ndarray, shift: float) -> np.ndarray:
    """Probabilities with their log-odds moved by ``shift`` (-inf and NaN kept: no answer)."""
    p = np.asarray(probabilities, dtype=np.float64)
    out = 1.0 / (1.0 + np.exp(-(logit(np.where(np.isfinite(p), p, 0.5)) + shift)))
    return np.where(np.isfinite(p), out, p).astype(np.float32)


def expected_right(answer_scores: np.ndarray, known: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, expected)``: the scores with no answer as ``-inf``, and how right each answer is expected to be: a
    labelled answer (``known``) counts as right or wrong, the others by their score (a probability)."""
    p = np.asarray(answer_scores, dtype=np.float64)
    p = np.where(np.isfinite(p), p, -np.inf)
    return p, np.where(known, np.asarray(right, dtype=np.float64), np.clip(p, 0.0, 1.0))


def expected_precision(answer_scores: np.ndarray, known: np.ndarray, right: np.ndarray, cut: float) -> float | None:
    """The expected precision of the answers kept at ``cut`` (see :func:`expected_right`); ``None`` when none is."""
    p, expected = expected_right(answer_scores, known, right)
    keep = p >= cut
    return float(expected[keep].mean()) if keep.any() else None


def labelled_cut(answer_scores: np.ndarray, known: np.ndarray, right: np.ndarray, target: float) -> float:
    """The lowest score whose kept answers' expected precision reaches ``target``: a labelled answer (``known``)
    counts as right or wrong, the others by their score (a probability). ``inf`` when no cut reaches it."""
    p, expected = expected_right(answer_scores, known, right)
    order = np.argsort(-p, kind="stable")
    order = order[np.isfinite(p[order])]
    if not order.size:
        return float("inf")
    means = np.cumsum(expected[order]) / np.arange(1, order.size + 1)
    s = p[order]
    ends = np.r_[s[1:] < s[:-1], True]
    ok = np.flatnonzero(ends & (means >= target))
    return float(s[ok[-1]]) if ok.size else float("inf")


def decision_digest(decision: dict[str, Any]) -> str:
    """A short fingerprint of a decision's numbers (what a calibration file was made with)."""
    return hashlib.sha256(json.dumps(decision, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Calibration:
    """Labels of one matcher's answers and the log-odds shift they give its decision."""

    matcher: str
    decision: str  # decision_digest of the decision the labels were given on
    labels: list[dict[str, Any]] = field(default_factory=list)  # {"query", "answer", "right": bool, "probability"}
    shift: float = 0.0
    target_precision: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: [target precision, threshold] rows of the labelled join, by rising target (threshold None: none reaches it)
    cuts: list[list[float | None]] = field(default_factory=list)
    #: what the labels judged (:data:`LABELS_OF`): a join's answers, or a list's pairs (scored by the join's decision)
    labels_of: str = "join"
    #: threshold="auto" takes the stored cut (:meth:`stored_cut`) instead of reading it from the join: for joins that
    #: see their queries in chunks; not saved
    use_stored_cuts: bool = field(default=False, compare=False)
    #: whether the user's answers win over the threshold (:meth:`verdicts`; dedupe's ``honour_labels``); False: the
    #: threshold alone decides (:meth:`threshold_alone`); not saved
    honour: bool = field(default=True, compare=False)

    @classmethod
    def from_labels(cls, matcher_name: str, decision: dict[str, Any], labels: list[dict[str, Any]],
                    target_precision: float | None = None, labels_of: str = "join") -> Calibration:  # fmt: skip
        """A calibration from labelled answers (each with the decision's ``probability`` of the answer); ``labels_of``:
        ``"list"`` for labels of one list's pairs (dedupe)."""
        if labels_of not in LABELS_OF:
            raise ValueError(f"labels_of must be one of {LABELS_OF}, got {labels_of!r}.")
        check_labels(labels, either_order=labels_of == "list")
        usable = [row for row in labels if row.get("right") is not None]
        p = np.array([row["probability"] for row in usable], dtype=np.float64)
        y = np.array([bool(row["right"]) for row in usable])
        shift = fit_shift(p, y) if usable else 0.0
        meta = {"created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "labelled": len(usable)}
        return cls(matcher_name, decision_digest(decision), list(labels), shift, target_precision, meta,
                   labels_of=labels_of)  # fmt: skip

    @property
    def of_list(self) -> bool:
        """Whether the labels judged pairs of one list (dedupe), not a join's answers."""
        return self.labels_of == "list"

    def check_use(self, dedupe: bool = False) -> Calibration:
        """Refuse a list's labels for a join or a link (``dedupe``: whether it calibrates a dedupe, which takes
        either kind); returns ``self``."""
        if self.of_list and not dedupe:
            raise CalibrationError(
                "This calibration labels pairs of one list (phrasezoo match label --input): it calibrates dedupe "
                "only. For a join or a link, label its answers: phrasezoo match label --left ... --right ... (or --kb "
                "... --mentions ...)."
            )
        return self

    def check_matcher(self, matcher_name: str, decision: dict[str, Any] | None, dedupe: bool = False) -> None:
        """Refuse this calibration for another matcher or decision, and (:meth:`check_use`) a list's for a join."""
        self.check_use(dedupe)
        if decision is None:
            raise CalibrationError(
                f"A calibration needs the default matcher's decision; {matcher_name} has none. Use the matcher the "
                f"labels were given on ({self.matcher})."
            )
        if matcher_name != self.matcher or decision_digest(decision) != self.decision:
            raise CalibrationError(
                f"This calibration was made with {self.matcher} (decision {self.decision}); this matcher is "
                f"{matcher_name} (decision {decision_digest(decision)}). Its shift means nothing on other scores: "
                "label this matcher's answers again (phrasezoo match label)."
            )

    def apply(self, scores: np.ndarray) -> np.ndarray:
        return shifted(scores, self.shift)

    def known(self, queries: list[str], answers: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
        """Which of the (query, answer) pairs were labelled, and their labels (a list's labels in either order)."""
        if self.of_list:
            return self.known_either(queries, answers)
        return self.known_as_given(queries, answers)

    def known_as_given(self, queries: list[str], answers: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
        table = {
            (row["query"], row["answer"]): bool(row["right"]) for row in self.labels if row.get("right") is not None
        }
        found = [table.get((q, a)) for q, a in zip(queries, answers)]
        return np.array([v is not None for v in found], dtype=bool), np.array([bool(v) for v in found], dtype=bool)

    def known_either(self, first: list[str], second: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`known` for pairs of one list's rows (dedupe), a label given in either order; the order given
        first wins where both were labelled."""
        known, right = self.known_as_given(first, second)
        back, back_right = self.known_as_given(second, first)
        return known | back, np.where(known, right, back_right)

    def summary(self) -> dict[str, Any]:
        """What a result's report says of the calibration it used: the shift, how many labels, whether they were
        honoured."""
        return {"shift": self.shift, "labels": len(self.labels), "honoured": self.honour}

    def threshold_alone(self) -> Calibration:
        """A copy whose labels recalibrate the scores and set the threshold but do not win over it: a join keeps
        exactly the answers at or above the threshold, a dedupe links exactly the pairs there (the behaviour rules
        35 and 49 of docs/experiments/matching.md measured as "plain": its precision lands nearer the target, the
        labelled answers' own verdicts aside)."""
        return dataclasses.replace(self, honour=False)

    def verdicts(self, queries: list[str], ids: np.ndarray, reference: list[str]) -> np.ndarray:
        """Per query and candidate (``ids``: rows of ``reference``, one row per query, -1 for none): 1 labelled the
        same thing, -1 labelled not, 0 not labelled (every one 0 with :meth:`threshold_alone`). A join keeps an answer
        labelled 1 whatever the threshold and never returns one labelled -1: the user's own answers win over the
        model's."""
        ids = np.asarray(ids)
        if not self.honour:
            return np.zeros(ids.shape, dtype=np.int8)
        flat_queries = [q for q in queries for _ in range(ids.shape[1])]
        flat_answers = [reference[i] if i >= 0 else None for i in ids.ravel().tolist()]
        known, right = self.known(flat_queries, flat_answers)
        return np.where(known, np.where(right, 1, -1), 0).astype(np.int8).reshape(ids.shape)

    def labelled_pairs(self) -> list[tuple[str, str, bool]]:
        """``(first, second, right)`` of every labelled (not skipped) pair, in the order given."""
        return [
            (row["query"], row["answer"], bool(row["right"])) for row in self.labels if row.get("right") is not None
        ]

    def cut_for(self, answer_scores: np.ndarray, queries: list[str], answers: list[str | None], target: float) -> float:
        """The threshold of this join for ``target`` (``answer_scores`` already recalibrated; see the module), or the
        stored one with ``use_stored_cuts``."""
        if self.use_stored_cuts:
            return self.stored_cut(target)
        known, right = self.known(queries, answers)
        return labelled_cut(answer_scores, known, right, target)

    def with_cuts(self, answer_scores: np.ndarray, queries: list[str], answers: list[str | None]) -> Calibration:
        """Store the labelled join's threshold for each of :data:`CUT_TARGETS` and this calibration's target, from
        its answers' decision probabilities (``answer_scores``, not yet recalibrated); returns ``self``."""
        scores = self.apply(answer_scores)
        known, right = self.known(queries, answers)
        targets = sorted({*CUT_TARGETS, *([self.target_precision] if self.target_precision else [])})
        cuts = [labelled_cut(scores, known, right, t) for t in targets]
        self.cuts = [[float(t), float(c) if np.isfinite(c) else None] for t, c in zip(targets, cuts)]
        return self

    def stored_cut(self, target: float) -> float:
        """The labelled join's threshold for ``target`` (interpolated between stored targets; ``inf`` where no
        threshold reached it)."""
        if not self.cuts:
            raise CalibrationError(
                "This calibration holds no thresholds (it was made without its join); write it with 'phrasezoo match "
                "label' or phrasezoo.match.calibrate, or pass a number as the threshold."
            )
        targets = [row[0] for row in self.cuts]
        if not targets[0] <= target <= targets[-1]:
            raise CalibrationError(f"This calibration holds thresholds for target precisions {targets[0]} to "
                                   f"{targets[-1]}, not {target}: choose one in that range, or pass a number as the "
                                   "threshold.")  # fmt: skip
        cuts = np.array([np.inf if row[1] is None else row[1] for row in self.cuts], dtype=np.float64)
        at = int(np.searchsorted(targets, target))
        if targets[at] == target or not np.isfinite(cuts[at]):
            return float(cuts[at])
        return float(np.interp(target, targets[at - 1 : at + 1], cuts[at - 1 : at + 1]))

    def to_dict(self) -> dict[str, Any]:
        return {"format_version": FORMAT_VERSION, "kind": KIND, "matcher": self.matcher, "decision": self.decision,
                "labels_of": self.labels_of, "shift": self.shift, "target_precision": self.target_precision,
                "cuts": self.cuts, "labels": self.labels, "meta": self.meta}  # fmt: skip

    def save(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        atomic_write_text(path, json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")
        return path


def check_labels(labels: list[dict[str, Any]], either_order: bool = False) -> None:
    """Refuse labels that contradict each other (one pair labelled both right and wrong; ``either_order``: in either
    order, as a list's pairs are) or lack their fields."""
    seen: dict[tuple[str, str], bool] = {}
    for i, row in enumerate(labels):
        missing = [k for k in ("query", "answer", "right", "probability") if k not in row]
        if missing:
            raise CalibrationError(f"Label {i} lacks {missing}; each label needs query, answer, right, probability.")
        if row["right"] is None:
            continue
        key = (row["query"], row["answer"])
        if either_order and key not in seen:
            key = key if (key[1], key[0]) not in seen else (key[1], key[0])
        if key in seen and seen[key] != bool(row["right"]):
            raise CalibrationError(
                f"The pair {key[0]!r} -> {key[1]!r} is labelled both right and wrong; keep one answer and label again."
            )
        seen[key] = bool(row["right"])


def read_calibration(path: str | os.PathLike) -> Calibration:
    """A calibration file, checked: its kind and version, and its labels."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise CalibrationError(f"{path}: cannot read the calibration file ({err}).") from err
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise CalibrationError(f"{path} is not a phrasezoo calibration file (write one with 'phrasezoo match label').")
    if data.get("format_version") != FORMAT_VERSION:
        raise CalibrationError(
            f"{path}: format_version {data.get('format_version')!r}; this phrasezoo reads {FORMAT_VERSION}. Label "
            "again with this version (phrasezoo match label), or use the phrasezoo that wrote it."
        )
    labels = data.get("labels") or []
    labels_of = data.get("labels_of", "join")  # files written before lists had sessions labelled joins
    if labels_of not in LABELS_OF:
        raise CalibrationError(f"{path}: labels_of {labels_of!r} is not one of {', '.join(LABELS_OF)}; label again "
                               "(phrasezoo match label) to write a sound file.")  # fmt: skip
    check_labels(labels, either_order=labels_of == "list")
    cuts = data.get("cuts") or []
    if any(not isinstance(row, list) or len(row) != 2 for row in cuts) or [r[0] for r in cuts] != sorted(
        r[0] for r in cuts
    ):
        raise CalibrationError(f"{path}: its cuts are not [target precision, threshold] rows by rising target; "
                               "label again (phrasezoo match label) to write a sound file.")  # fmt: skip
    return Calibration(data["matcher"], data["decision"], labels, float(data.get("shift", 0.0)),
                       data.get("target_precision"), data.get("meta") or {}, cuts, labels_of)  # fmt: skip


def as_calibration(calibration: Calibration | str | os.PathLike | None) -> Calibration | None:
    if calibration is None or isinstance(calibration, Calibration):
        return calibration
    return read_calibration(calibration)
