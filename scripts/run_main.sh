#!/usr/bin/env bash
# The main job on the embedded defaults: set up .venv, train pearl-mini (its three soup seeds side by side, one per
# core), choose its post-training mix on the dev suite, export outputs/pearl-mini/ once as a Hub-ready folder,
# evaluate it and the raw MiniLM baseline with the benchmark suite, write the card and print the comparison table and
# the time of every stage (the install included).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash scripts/bootstrap.sh
export PHRASEZOO_INSTALL_SECONDS=$(( $(date +%s) - started ))
exec .venv/bin/phrasezoo pipeline hub_configs/pearl-mini.yaml --benchmarks-dir "${BENCHMARKS_DIR:-../shared/benchmarks}" "$@"
