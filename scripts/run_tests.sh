#!/usr/bin/env bash
# Set up .venv and run the whole test suite (what CI runs).
#
# With arguments: pytest with them (one folder, one test, -k ...). Without: the whole suite as two pytest processes
# side by side, one for the training side (methods, training, models, objectives, the GPU job, the paper recipes, the
# main job, the train command),
# one for everything else, each with its own temporary folder; their logs are printed one after the other and the
# run fails when either fails. On a 2-core machine this takes about two thirds of one process's time: much of the
# suite waits on subprocesses, servers and files.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if [ "$#" -gt 0 ]; then
  exec .venv/bin/python -m pytest -q "$@"
fi
TRAINING=(tests/methods tests/training tests/models tests/objectives tests/gpu_job tests/recipes_offline tests/test_pipeline.py
  tests/test_cli_train.py)
mapfile -t REST < <(ls -d tests/*/ tests/test_*.py | sed 's#/$##' | grep -v -e __pycache__ | grep -v -x -F -f <(printf '%s\n' "${TRAINING[@]}"))
logs=$(mktemp -d)
.venv/bin/python -m pytest -q -p no:cacheprovider --basetemp="$logs/tmp-training" "${TRAINING[@]}" \
  >"$logs/training.log" 2>&1 &
training=$!
.venv/bin/python -m pytest -q -p no:cacheprovider --basetemp="$logs/tmp-rest" "${REST[@]}" >"$logs/rest.log" 2>&1 &
rest=$!
status=0
wait "$training" || status=1
wait "$rest" || status=1
for part in training rest; do
  echo "===== tests: $part ====="
  cat "$logs/$part.log"
done
rm -rf "$logs"
exit "$status"
