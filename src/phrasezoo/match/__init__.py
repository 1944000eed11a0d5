"""Fuzzy joins and entity linking with phrase embeddings (or rapidfuzz), over faiss, pandas in and out.

```python
from phrasezoo.match import calibrate, dedupe, join, link

join(left_df, right_df, left_column="title", right_column="title", model="outputs/pearl-mini", threshold=0.7)
link(["NYTimes"], {"Q9684": ["The New York Times", "NYT"]}, top_k=3)
dedupe(["The New York Times", "NY Times", "New York Post"])  # clusters of one list
calibrate(left_df, right_df, labelled_pairs).save("calibration.json")  # a few labels: join(..., calibration=)
calibrate_dedupe(names, labelled_pairs).save("list.json")  # labels of a list's pairs: dedupe(..., calibration=)
```

Command line: ``python -m phrasezoo.match join --left a.csv --right b.csv --output joined.csv`` (see ``--help``).
"""

from __future__ import annotations

from .api import calibrate, calibrate_dedupe, join, link
from .engine.blocking import SCHEMES as BLOCKING_SCHEMES
from .engine.dedupe import DEDUPE_COLUMNS, dedupe
from .engine.matcher import Matcher
from .engine.results import JOIN_COLUMNS, LINK_COLUMNS
from .model.calibration import Calibration, CalibrationError, read_calibration
from .model.combinations import Combination
from .model.learned import DEFAULT_ENCODER
from .scoring.index import INDEX_TYPES
from .scoring.scorers import DEFAULT_MODEL, RAPIDFUZZ_SCORERS, TFIDF_KINDS

__all__ = [
    "BLOCKING_SCHEMES",
    "Calibration",
    "CalibrationError",
    "DEFAULT_ENCODER",
    "DEFAULT_MODEL",
    "INDEX_TYPES",
    "JOIN_COLUMNS",
    "LINK_COLUMNS",
    "RAPIDFUZZ_SCORERS",
    "TFIDF_KINDS",
    "Combination",
    "DEDUPE_COLUMNS",
    "Matcher",
    "calibrate",
    "calibrate_dedupe",
    "dedupe",
    "join",
    "link",
    "read_calibration",
]
