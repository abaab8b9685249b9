#!/usr/bin/env bash
# The env area on the GPU machine: quick and deep probes recorded as (redacted) fixtures, the
# human and JSON output, the gpu-marked env tests and the env benchmark. Usage: env.sh OUTDIR
# Expects the repo root as cwd and PYTHONPATH set (scripts/gpu_run.sh does both).
out=${1:?usage: env.sh OUTDIR}
mkdir -p "$out"
py=python3
note="GPU machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), its python3 (a venv with the pip torch and its nvidia-* wheels, plus an older system cuDNN in /lib/x86_64-linux-gnu)"
{
  echo "## nvidia-smi"; nvidia-smi -L | sed -E 's/\(UUID: [^)]*\)//'
  echo "## ldconfig cuDNN"; ldconfig -p | grep libcudnn
  for mode in "" "--deep"; do
    echo "## cuda-clinic env $mode"
    $py -m core env $mode; echo "exit=$?"
  done
} >"$out/env_human.txt" 2>&1
$py tests/data/env/record.py "$out/gpu_quick.json" --note "$note"
$py tests/data/env/record.py "$out/gpu_deep.json" --deep --note "$note"
$py -m core env --deep --json >"$out/env_deep_cli.json"; echo "env --deep --json exit=$?"
$py -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_env_gpu.py >"$out/pytest_env.txt" 2>&1
echo "pytest gpu exit=$?"
$py -m pytest -q -p no:cacheprovider tests/core/env >>"$out/pytest_env.txt" 2>&1
echo "pytest core/env exit=$?"
$py benchmarks/bench_env.py --repeats 5 --json "$out/bench_env.json" >"$out/bench_env.txt" 2>&1
echo "bench exit=$?"
echo "=== summary"
grep -E "^(## |exit=|  (ERROR|WARNING|INFO)|  cuDNN|  Driver|  GPU)" "$out/env_human.txt"
grep -E "passed|failed|error" "$out/pytest_env.txt"
cat "$out/bench_env.txt"
