#!/usr/bin/env bash
# The report area on the GPU machine: a deep report in JSON/Markdown/HTML with secrets planted in
# the environment and in the pasted log, then a check that none of them (nor the GPU UUIDs,
# serials, host name or IP addresses) reached any output. Usage: report.sh OUTDIR
# Expects the repo root as cwd and PYTHONPATH set (scripts/gpu_run.sh does both). No PDF here:
# PySide6 is not installed on the GPU machine.
out=${1:?usage: report.sh OUTDIR}
mkdir -p "$out"
py=python3
rand() { head -c 200 /dev/urandom | tr -dc 'A-Za-z0-9' | head -c "$1"; }
# Token-shaped values are generated here at run time, never stored in the repository.
export HF_TOKEN="hf_$(rand 34)"
export NVIDIA_API_KEY="nvapi-$(rand 64)"
export CUDA_CACHE_TOKEN="FAKESECRET_$(rand 16)"
export WANDB_API_KEY="$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
gh="ghp_$(rand 36)"
host=$(hostname)
ips=$(hostname -I 2>/dev/null || true)
log="$out/pasted_error.txt"
{
  echo "$USER@$host:$HOME\$ GITHUB_TOKEN=$gh python train.py"
  echo "NCCL INFO Bootstrap : Using eth0:${ips%% *}<0>"
  echo "Traceback (most recent call last):"
  echo "  File \"$HOME/proj/train.py\", line 41, in <module>"
  echo "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"
} >"$log"
for fmt in json md html; do
  $py -m core report --error "$log" --format "$fmt" -o "$out/report_gpu.$fmt" 2>"$out/stderr_$fmt.txt"
  echo "report --format $fmt exit=$? $(tail -1 "$out/stderr_$fmt.txt")"
done
$py -m core report --error "$log" --no-redact --format json -o "$out/report_gpu_unredacted.json" \
  2>/dev/null
echo "report --no-redact exit=$?"
# Every planted or machine-identifying value must be absent from the redacted outputs.
secrets=("$HF_TOKEN" "$NVIDIA_API_KEY" "$CUDA_CACHE_TOKEN" "$WANDB_API_KEY" "$gh" "$host")
for ip in $ips; do secrets+=("$ip"); done
while read -r uuid; do secrets+=("$uuid"); done < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
while read -r serial; do
  case "$serial" in ""|*"N/A"*|*"Not"*) ;; *) secrets+=("$serial") ;; esac
done < <(nvidia-smi --query-gpu=serial --format=csv,noheader)
leaks=0
for f in "$out"/report_gpu.json "$out"/report_gpu.md "$out"/report_gpu.html; do
  for s in "${secrets[@]}"; do
    if [ -n "$s" ] && grep -qwF -- "$s" "$f"; then echo "LEAK: ${s:0:6}... in $(basename "$f")"; leaks=$((leaks + 1)); fi
  done
done
echo "checked ${#secrets[@]} values in 3 files: $leaks leaks"
rm -f "$out/report_gpu_unredacted.json" "$log"  # they hold the planted values
$py -m core report diff "$out/report_gpu.json" "$out/report_gpu.json" >"$out/diff_self.txt"
echo "diff self exit=$? $(head -1 "$out/diff_self.txt")"
head -c 1500 "$out/report_gpu.md"
[ "$leaks" -eq 0 ]
