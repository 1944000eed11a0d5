"""Hub-ready export, model cards and upload."""
