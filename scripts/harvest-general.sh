#!/usr/bin/env bash
# Builds xling's general training corpus: the human translations of the Debian packages listed in
# configs/general-corpus.txt and configs/everyday-corpus.txt (fetched with apt-get download;
# nothing is installed), merged with the shared gettext corpus; a general dev set of held-out
# documents (2%), and an everyday dev set: a quarter of the documents of the everyday sources
# (stamp folders, games' script files), held out whole.
#   bash scripts/harvest-general.sh SHARED_GETTEXT_TRAIN OUT_DIR [ALIGN_MODEL]
# writes OUT_DIR/general.tsv.gz, OUT_DIR/general.dev.tsv.gz, OUT_DIR/general.stats.json,
# OUT_DIR/everyday.dev.tsv.gz (and OUT_DIR/everyday.tsv.gz, the everyday sources' training rows,
# which general.tsv.gz includes).
# ALIGN_MODEL: the encoder that aligns document paragraphs whose sentence counts differ (default:
# xling's default model).
set -euo pipefail
cd "$(dirname "$0")/.."
train="${1:?usage: harvest-general.sh SHARED_GETTEXT_TRAIN OUT_DIR [ALIGN_MODEL]}"
out="${2:?usage: harvest-general.sh SHARED_GETTEXT_TRAIN OUT_DIR [ALIGN_MODEL]}"
args=()
[ -n "${3:-}" ] && args=(--model "$3")
mkdir -p "$out"
list() { sed -e 's/#.*//' -e 's/[[:space:]]//g' "$1" | grep -v '^$' | paste -sd, -; }
node dist/src/cli/main.js corpus --debian "$(list configs/everyday-corpus.txt)" --cache "$out/debs" "${args[@]}" \
  -o "$out/everyday.tsv.gz" --dev-out "$out/everyday.dev.tsv.gz" --dev-fraction 0.25 --min-lang-rows 1 \
  --stats "$out/everyday.stats.json"
node dist/src/cli/main.js corpus "$train" "$out/everyday.tsv.gz" --debian "$(list configs/general-corpus.txt)" \
  --cache "$out/debs" "${args[@]}" \
  -o "$out/general.tsv.gz" --dev-out "$out/general.dev.tsv.gz" --dev-fraction 0.02 --stats "$out/general.stats.json"
