"""The core helpers every level stands on: atomic files, errors, progress bars, the machine, recipes, vectors."""
