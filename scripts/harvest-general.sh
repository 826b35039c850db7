#!/usr/bin/env bash
# Builds xling's general training corpus: the human translations of the Debian packages listed in
# configs/general-corpus.txt (fetched with apt-get download; nothing is installed), merged with the
# shared gettext corpus, and a general dev set of held-out documents (2%).
#   bash scripts/harvest-general.sh SHARED_GETTEXT_TRAIN OUT_DIR [ALIGN_MODEL]
# writes OUT_DIR/general.tsv.gz, OUT_DIR/general.dev.tsv.gz and OUT_DIR/general.stats.json.
# ALIGN_MODEL: the encoder that aligns document paragraphs whose sentence counts differ (default:
# xling's default model).
set -euo pipefail
cd "$(dirname "$0")/.."
train="${1:?usage: harvest-general.sh SHARED_GETTEXT_TRAIN OUT_DIR [ALIGN_MODEL]}"
out="${2:?usage: harvest-general.sh SHARED_GETTEXT_TRAIN OUT_DIR [ALIGN_MODEL]}"
args=()
[ -n "${3:-}" ] && args=(--model "$3")
mkdir -p "$out"
pkgs=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' configs/general-corpus.txt | grep -v '^$' | paste -sd, -)
node dist/src/cli/main.js corpus "$train" --debian "$pkgs" --cache "$out/debs" "${args[@]}" \
  -o "$out/general.tsv.gz" --dev-out "$out/general.dev.tsv.gz" --dev-fraction 0.02 --stats "$out/general.stats.json"
