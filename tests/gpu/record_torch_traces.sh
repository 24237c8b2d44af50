#!/usr/bin/env bash
# Runs on the GPU machine: records a torch.profiler trace of every PyTorch scenario in
# examples/python/ into $OUT (the ground truth that tests/data/traces/ replays in CI).
set -uo pipefail
out=${OUT:-/tmp/gpuidle-out}
mkdir -p "$out"
cd "$(dirname "$0")/../../examples/python"
{
  date -u '+date: %Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  python3 -c 'import torch; print("torch:", torch.__version__, "cuda:", torch.version.cuda)'
} | tee "$out/record.log"
export PYTHONUNBUFFERED=1
for s in dataloader_starved tiny_mlp_launch_bound item_sync pageable_h2d healthy_matmul mixed_resnet; do
  extra=()
  [ "$s" = item_sync ] && extra=(--with-stack)
  timeout 300 python3 "$s.py" --out "$out/$s.json.gz" "${extra[@]}" 2>&1 | tee -a "$out/record.log"
  echo "exit $s: ${PIPESTATUS[0]}" | tee -a "$out/record.log"
done
ls -l "$out"
