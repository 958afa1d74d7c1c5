#!/usr/bin/env bash
# The dense leg's GPU figures, in one prepared run of under 10 minutes on a CUDA machine
# (docs/migration.md, "GPU profile"):
#   1. texts/s of minilm-cuda-fp16 and of CUDA fp32 against CPU fp32 (benchmarks/gpu_check.py)
#   2. full QMSum end to end (every turn embedded from a cold cache, model load included):
#      harness bench --mode vector --model minilm-cuda-fp16
#   3. the migration study minilm -> minilm-cuda-fp16 on the QMSum validation split
# Usage: tools/gpu-check.sh QMSUM_VAL_DIR [QMSUM_FULL_DIR] [OUT_DIR]
# Each step has its own time limit; a step that runs out is reported and the rest still run.
set -u
VAL=${1:?usage: tools/gpu-check.sh QMSUM_VAL_DIR [QMSUM_FULL_DIR] [OUT_DIR]}
FULL=${2:-}
OUT=${3:-${OUT:-gpu-check-out}}
PY=${PYTHON:-python}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT"
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT

step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$? t1=$(date +%s.%N)
  printf '%s: exit %s, %.1f s wall\n' "$name" "$rc" "$(echo "$t1 - $t0" | bc)" | tee -a "$OUT/summary.txt"
  tail -n 25 "$OUT/$name.log"
}

$PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "devices",
[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])' | tee "$OUT/summary.txt"
step rates 150 $PY -m benchmarks.gpu_check --qmsum "$VAL"
if [ -n "$FULL" ]; then
  step qmsum-full 240 $PY -m harness bench --corpus "qmsum:$FULL" --mode vector \
    --model minilm-cuda-fp16 --device cuda --cache-dir "$CACHE/full" --no-prepared-cache \
    --no-warehouse --out "$OUT/qmsum-full"
fi
step migrate 180 $PY -m harness migrate --old minilm --new minilm-cuda-fp16 \
  --corpus "qmsum:$VAL" --cache-dir "$CACHE/migrate" --certificates "$OUT/certificates" \
  --no-warehouse --out "$OUT/migration"
cat "$OUT/summary.txt"
