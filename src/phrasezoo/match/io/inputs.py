"""Turn what users pass (lists, pandas Series, DataFrame columns, dicts) into clean string lists with labels.

The rules (every input row is either matched, or listed as skipped or unmatched; nothing is dropped silently):

* strings are matched as they are; numbers (``int``, ``float``, numpy and ``Decimal`` numbers) are matched as their
  text (``str(3)`` = ``"3"``, a float that is a whole number without ``.0``); ``bytes`` are decoded as UTF-8;
* missing values (``None``, NaN, ``pd.NA``, empty or whitespace-only strings) raise a ``ValueError`` naming the rows,
  or are skipped with ``on_missing="skip"`` (the skipped rows are listed in the result's ``attrs["skipped"]``);
* any other value (a list, a dict, a bool, a date...) raises a ``ValueError`` naming the row and its type;
* strings longer than :data:`MAX_CHARS` characters are matched on their first :data:`MAX_CHARS` characters (the
  output shows the whole value): a name is never that long, and a multi-megabyte cell would stall every scorer.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MISSING_POLICIES = ("raise", "skip")
MAX_CHARS = 2000
LIBRARY_FIX = "pass on_missing='skip'"


class MissingValuesError(ValueError):
    """Missing or empty values where they may not be skipped. The message names the rows and the fix; a caller
    with its own spelling of the fix (the CLI's ``--skip-missing``) rewords it with :meth:`describe`, and a caller
    that knows where the rows came from (a chunk of a file) adds it with :meth:`at`."""

    def __init__(self, what: str, bad: Sequence[Any], where: str = "") -> None:
        self.what, self.bad, self.where = what, list(bad), where
        super().__init__(self.describe())

    def describe(self, fix: str = LIBRARY_FIX) -> str:
        shown = ", ".join(map(str, self.bad[:5])) + (", ..." if len(self.bad) > 5 else "")
        return (
            f"{self.where}The {self.what} has {len(self.bad)} missing or empty value(s) (rows {shown}). Drop them "
            f"(.dropna()), fill them, or {fix}."
        )

    def at(self, where: str) -> MissingValuesError:
        """The same error, located (``where`` ends with ": ")."""
        return MissingValuesError(self.what, self.bad, where + self.where)


@dataclass
class Column:
    """Values to match and the label of each (the pandas index label, or the position for plain lists).

    ``values`` are the matched texts (cut to :data:`MAX_CHARS`), ``originals`` the values as given (shown in the
    output), ``skipped`` the labels of the rows left out with ``on_missing="skip"``."""

    values: list[str]
    labels: list[Any]
    name: str
    positions: list[int]
    originals: list[Any] = field(default_factory=list)
    skipped: list[Any] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.values)


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    pd = sys.modules.get("pandas")  # pandas' NA and NaT exist only once pandas is imported: no import per cell
    if pd is not None and (value is pd.NA or value is pd.NaT):
        return True
    if isinstance(value, float | numbers.Real) and not isinstance(value, bool | numbers.Integral):
        try:
            return value != value  # NaN
        except TypeError:
            return False
    return isinstance(value, str) and not value.strip()


def as_text(value: Any, what: str, label: Any) -> str:
    """The text of one cell (see the module rules); raises a ``ValueError`` naming the row for other types."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"The {what} row {label!r} holds bytes that are not UTF-8; decode them first.") from err
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise ValueError(
            f"The {what} row {label!r} holds a {type(value).__name__} ({str(value)[:40]!r}), not a string or number; "
            "convert the column to text first."
        )
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real) and float(value).is_integer() and abs(float(value)) < 1e15:
        return str(int(value))
    return str(value)


def check_strings(values: Sequence[str], what: str) -> list[str]:
    """A non-empty list of non-empty strings (a reference table given to :meth:`Matcher.fit`), else a clear error."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(f"The {what} must be a list of strings, got {type(values).__name__}.")
    values = list(values)
    if not values:
        raise ValueError(f"The {what} is empty: nothing to match against.")
    for i, value in enumerate(values):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"The {what} row {i} is {value!r}; every row must be a non-empty string.")
    return [v[:MAX_CHARS] for v in values]


def as_column(data: Any, column: str | None = None, what: str = "input", on_missing: str = "raise",
              allow_empty: bool = False) -> Column:  # fmt: skip
    """Strings and their labels from a list/tuple, a pandas Series, or a DataFrame (``column`` names the text column).

    See the module docstring for the rules. ``allow_empty``: an empty input gives an empty column instead of an error.
    """
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help' and 'import phrasezoo.match'

    if on_missing not in MISSING_POLICIES:
        raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
    if isinstance(data, pd.DataFrame):
        if column is None:
            if data.shape[1] != 1:
                raise ValueError(
                    f"The {what} DataFrame has {data.shape[1]} columns ({', '.join(map(str, data.columns[:10]))}): "
                    f"name the one to match (e.g. {what}_column='{data.columns[0] if data.shape[1] else 'title'}')."
                )
            column = data.columns[0]
        if column not in data.columns:
            raise ValueError(
                f"The {what} DataFrame has no column {column!r}; its columns are: {', '.join(map(str, data.columns))}."
            )
        if int((data.columns == column).sum()) > 1:
            raise ValueError(f"The {what} DataFrame has {int((data.columns == column).sum())} columns named {column!r}; "
                             "rename them so that the text column is unique.")  # fmt: skip
        series = data[column]
    elif isinstance(data, pd.Series):
        if column is not None:
            raise ValueError(f"A {what} Series has one column already; drop {what}_column={column!r}.")
        series = data
    elif isinstance(data, str | bytes) or not isinstance(data, Iterable) or isinstance(data, Mapping):
        raise ValueError(
            f"The {what} must be a list of strings, a pandas Series or a DataFrame, got {type(data).__name__}."
        )
    else:
        if column is not None:
            raise ValueError(f"A {what} list has no columns; drop {what}_column={column!r}.")
        series = pd.Series(list(data), dtype=object)
    name = str(series.name) if series.name is not None else what
    values, labels, positions, originals, bad = [], [], [], [], []
    for position, (label, value) in enumerate(series.items()):
        if _is_missing(value):
            bad.append(label)
            continue
        text = as_text(value, what, label)
        if not text.strip():
            bad.append(label)
            continue
        values.append(text[:MAX_CHARS])
        originals.append(value)
        labels.append(label)
        positions.append(position)
    if bad and on_missing == "raise":
        raise MissingValuesError(what, bad)
    if not values and not allow_empty:
        detail = "it is empty" if not bad else f"all {len(bad)} values are missing or empty"
        raise ValueError(f"The {what} has no values to match ({detail}).")
    return Column(values, labels, name, positions, originals, bad)


def as_kb(
    kb: Any, name_column: str | None = None, id_column: str | None = None, on_missing: str = "raise"
) -> tuple[Column, list[Any]]:
    """Names of a knowledge base and the entity id of each name (several names may share an id: aliases).

    Accepted: a list of names (ids = positions), a Series (ids = index labels), a dict ``{id: name}`` or
    ``{id: [alias, ...]}``, or a DataFrame with a name column (``name_column``, default ``"name"``) and an
    optional id column (``id_column``, default ``"id"`` when present, else the index).
    """
    import pandas as pd  # lazy: keeps pandas off 'phrasezoo --help' and 'import phrasezoo.match'

    if isinstance(kb, Mapping):
        ids, names = [], []
        for entity, value in kb.items():
            aliases = [value] if isinstance(value, str | bytes) or not isinstance(value, Sequence) else value
            if not aliases:
                raise ValueError(f"KB entity {entity!r} has an empty list of names.")
            for alias in aliases:
                ids.append(entity)
                names.append(alias)
        kb = pd.DataFrame({"id": pd.Series(ids, dtype=object), "name": pd.Series(names, dtype=object)})
        name_column, id_column = "name", "id"
    if isinstance(kb, pd.DataFrame):
        if name_column is None:
            name_column = "name" if "name" in kb.columns else (kb.columns[0] if kb.shape[1] == 1 else None)
        if name_column is None:
            raise ValueError(
                f"The KB DataFrame has no 'name' column; name the column of entity names with kb_name_column= "
                f"(columns: {', '.join(map(str, kb.columns))})."
            )
        if id_column is None and "id" in kb.columns and name_column != "id":
            id_column = "id"
        if id_column is not None and id_column not in kb.columns:
            raise ValueError(f"The KB has no id column {id_column!r}; columns: {', '.join(map(str, kb.columns))}.")
        column = as_column(kb, name_column, what="kb", on_missing=on_missing)
        if id_column is not None:
            id_values = kb[id_column]
            if isinstance(id_values, pd.DataFrame):
                raise ValueError(f"The KB has {id_values.shape[1]} columns named {id_column!r}; rename them.")
            ids = list(id_values.iloc[column.positions])
            missing = [column.labels[i] for i, v in enumerate(ids) if _is_missing(v)]
            if missing:
                raise ValueError(f"The KB has {len(missing)} name(s) without an entity id (rows {missing[:5]}).")
        else:
            ids = list(column.labels)
        return column, ids
    column = as_column(kb, None, what="kb", on_missing=on_missing)
    return column, list(column.labels)
