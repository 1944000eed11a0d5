"""Turn what users pass (lists, pandas Series, DataFrame columns, dicts) into clean string lists with labels."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MISSING_POLICIES = ("raise", "skip")


@dataclass
class Column:
    """Values to match and the label of each (the pandas index label, or the position for plain lists)."""

    values: list[str]
    labels: list[Any]
    name: str
    positions: list[int]

    def __len__(self) -> int:
        return len(self.values)


def as_column(data: Any, column: str | None = None, what: str = "input", on_missing: str = "raise") -> Column:
    """Strings and their labels from a list/tuple, a pandas Series, or a DataFrame (``column`` names the text column).

    Missing values (None, NaN, empty or whitespace-only strings) raise a ``ValueError`` that names the rows, or are
    dropped with ``on_missing="skip"``. Non-string values (numbers) are converted with ``str``.
    """
    import pandas as pd

    if on_missing not in MISSING_POLICIES:
        raise ValueError(f"on_missing must be one of {MISSING_POLICIES}, got {on_missing!r}.")
    if isinstance(data, pd.DataFrame):
        if column is None:
            if data.shape[1] != 1:
                raise ValueError(
                    f"The {what} DataFrame has {data.shape[1]} columns ({', '.join(map(str, data.columns[:10]))}): "
                    f"name the one to match (e.g. {what}_column='{data.columns[0]}')."
                )
            column = data.columns[0]
        if column not in data.columns:
            raise ValueError(
                f"The {what} DataFrame has no column {column!r}; its columns are: {', '.join(map(str, data.columns))}."
            )
        series = data[column]
    elif isinstance(data, pd.Series):
        if column is not None:
            raise ValueError(f"A {what} Series has one column already; drop {what}_column={column!r}.")
        series = data
    elif isinstance(data, str) or not isinstance(data, Iterable) or isinstance(data, Mapping):
        raise ValueError(
            f"The {what} must be a list of strings, a pandas Series or a DataFrame, got {type(data).__name__}."
        )
    else:
        series = pd.Series(list(data), dtype=object)
    name = str(series.name) if series.name is not None else what
    values, labels, positions, bad = [], [], [], []
    for position, (label, value) in enumerate(series.items()):
        if value is None or (isinstance(value, float) and value != value) or not str(value).strip():
            bad.append(label)
            continue
        values.append(value if isinstance(value, str) else str(value))
        labels.append(label)
        positions.append(position)
    if bad and on_missing == "raise":
        shown = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        raise ValueError(
            f"The {what} has {len(bad)} missing or empty value(s) (rows {shown}). Drop them (.dropna()), fill them, "
            f"or pass on_missing='skip'."
        )
    if not values:
        raise ValueError(f"The {what} has no values to match (it is empty or every value is missing).")
    return Column(values, labels, name, positions)


def as_kb(
    kb: Any, name_column: str | None = None, id_column: str | None = None, on_missing: str = "raise"
) -> tuple[Column, list[Any]]:
    """Names of a knowledge base and the entity id of each name (several names may share an id: aliases).

    Accepted: a list of names (ids = positions), a Series (ids = index labels), a dict ``{id: name}`` or
    ``{id: [alias, ...]}``, or a DataFrame with a name column (``name_column``, default ``"name"``) and an
    optional id column (``id_column``, default ``"id"`` when present, else the index).
    """
    import pandas as pd

    if isinstance(kb, Mapping):
        ids, names = [], []
        for entity, value in kb.items():
            for alias in [value] if isinstance(value, str) or not isinstance(value, Sequence) else value:
                ids.append(entity)
                names.append(alias)
        kb = pd.DataFrame({"id": ids, "name": names})
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
        ids = list(kb[id_column].iloc[column.positions]) if id_column is not None else list(column.labels)
        return column, ids
    column = as_column(kb, None, what="kb", on_missing=on_missing)
    return column, list(column.labels)
