"""Input and output: what users pass turned into clean string columns, and table files read and written in chunks.

* :mod:`~phrasezoo.match.io.inputs`: lists, Series, DataFrame columns and knowledge bases to labelled strings (the
  rules for missing values, numbers and long strings);
* :mod:`~phrasezoo.match.io.tables`: CSV, TSV, parquet and JSON-lines files, whole or in chunks, and the output
  writer;
* :mod:`~phrasezoo.match.io.streaming`: a query table larger than memory matched chunk by chunk.

A bottom room of :mod:`phrasezoo.match`, beside :mod:`phrasezoo.match.features`: it imports no other room.
"""
