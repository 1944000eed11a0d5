#!/usr/bin/env bash
# The main job on the embedded defaults: set up .venv, train pearl-mini, evaluate it and the raw MiniLM baseline
# with the benchmark suite, export outputs/pearl-mini/ as a Hub-ready folder and print the comparison table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/phrasezoo pipeline hub_configs/pearl-mini.yaml --benchmarks-dir "${BENCHMARKS_DIR:-../shared/benchmarks}" "$@"
