#!/usr/bin/env bash
# Runs on the two-GPU machine: records the multi-GPU scenarios into $OUT.
#  - nccl_straggler.rank{0,1}.json.gz: two ranks, rank 1 late to every all-reduce
#  - one_of_two_gpus.json.gz: a single-GPU job on a machine with two visible GPUs
set -uo pipefail
out=${OUT:-/tmp/gpuidle-out}
mkdir -p "$out"
cd "$(dirname "$0")/../../examples/python"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
{
  date -u '+date: %Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
  nvidia-smi topo -m | head -4
  python3 -c 'import torch; print("torch:", torch.__version__, "nccl:", torch.cuda.nccl.version())'
} 2>&1 | tee "$out/record_multi.log"
timeout 300 torchrun --standalone --nproc_per_node=2 nccl_straggler.py --out "$out/nccl_straggler.json.gz" 2>&1 | grep -v UserWarning | tee -a "$out/record_multi.log"
echo "exit nccl_straggler: ${PIPESTATUS[0]}" | tee -a "$out/record_multi.log"
timeout 120 python3 healthy_matmul.py --out "$out/one_of_two_gpus.json.gz" 2>&1 | grep -v UserWarning | tee -a "$out/record_multi.log"
echo "exit one_of_two_gpus: ${PIPESTATUS[0]}" | tee -a "$out/record_multi.log"
ls -l "$out"
