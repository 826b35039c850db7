#!/usr/bin/env bash
# One-step, idempotent set-up of xling on Debian bookworm (root or sudo), then an action:
#   bash scripts/setup.sh --demo    set up, then run the demo
#   bash scripts/setup.sh --test    set up, then run the test suite
#   bash scripts/setup.sh --bench   set up (plus python3-torch/python3-faiss), then run the benchmarks
#   bash scripts/setup.sh           set up only
# Environment: LIBTORCH=/path/to/libtorch and FAISS_HOME=/prefix build against another libtorch
# (e.g. an official CUDA build, cxx11 ABI) or faiss instead of Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."

action="${1:-}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

# redis-server: the job queue of `xling worker` / `xling cluster` (BullMQ); tests start a private one
pkgs=(build-essential python3 libopenblas-dev libgomp1 redis-server)
[ -z "${LIBTORCH:-}" ] && pkgs+=(libtorch-dev)
[ -z "${FAISS_HOME:-}" ] && pkgs+=(libfaiss-dev)
[ "$action" = "--bench" ] && pkgs+=(python3-torch python3-faiss python3-numpy python3-sentencepiece)
# the web explorer's tests drive Debian's Chromium (puppeteer-core downloads no browser)
[ "$action" = "--test" ] && pkgs+=(chromium)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "[setup] xling needs Node.js >= 20 (found $(node --version))" >&2
  exit 1
fi

# npm dependencies (prebuilt tokenizers, node-addon-api, typescript); no binary downloads.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[setup] npm ci"
  # onnxruntime-node (under the dev dependency @huggingface/transformers: Hugging Face parity tests
  # and bench) would download CUDA binaries at install; its CPU runtime ships in the package
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
fi

echo "[setup] building the native addon and TypeScript"
npm run --silent build:native >/tmp/xling-build-native.log 2>&1 || { cat /tmp/xling-build-native.log >&2; exit 1; }
npm run --silent build:ts

case "$action" in
  --demo) exec npm run --silent demo ;;
  --test) exec npm test ;;
  --bench) exec npm run --silent bench ;;
  "") echo "[setup] done" ;;
  *) echo "unknown action $action (use --demo, --test or --bench)" >&2; exit 2 ;;
esac
