#!/usr/bin/env bash
# `make demo`: run usdgrip on the examples. Each step is a snippet in
# examples/demo.d/, run in order from the repository root with the venv's
# `usdgrip` first on PATH. Outputs go to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
mkdir -p out
for step in examples/demo.d/*.sh; do
    echo
    echo "### $(sed -n 's/^# step: //p' "$step")"
    bash -euo pipefail "$step"
done
