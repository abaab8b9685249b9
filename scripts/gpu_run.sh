#!/usr/bin/env bash
# Runs every GPU-side check on the device machine and packs the results into $OUT/gpu.tar.gz.
# Usage (on the GPU machine, from the repo root): bash scripts/gpu_run.sh [AREA ...]
# Areas are the scripts in scripts/gpu/ (env, tests, wizards, bench, ...); default: all.
set -u
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export CUDA_CLINIC_DATA_DIR=/tmp/clinic-data
results=/tmp/gpu-results
rm -rf "$results" && mkdir -p "$results"
areas=("$@")
if [ ${#areas[@]} -eq 0 ]; then
  for f in scripts/gpu/*.sh; do areas+=("$(basename "$f" .sh)"); done
fi
summary=()
for area in "${areas[@]}"; do
  mkdir -p "$results/$area"
  start=$(date +%s)
  bash "scripts/gpu/$area.sh" "$results/$area" >"$results/$area/log.txt" 2>&1
  rc=$?
  summary+=("$area rc=$rc $(( $(date +%s) - start ))s")
done
tar -C "$results" -czf "${OUT:-/tmp}/gpu.tar.gz" .
for area in "${areas[@]}"; do echo "=== $area (last lines)"; tail -n 15 "$results/$area/log.txt"; done
echo "=== summary"; printf '%s\n' "${summary[@]}"
