#!/usr/bin/env bash
# The env fault matrix on the GPU machine: 20 broken setups users really hit, each one
# `python3 -m core env --deep --json` under a changed environment (tests/data/env/broken/
# expected.toml wrote down the expected first finding of each BEFORE this ran), plus, for the
# setups where torch itself fails, what a plain torch program prints in the same setup.
# Bounded: each setup <= 25 s, the whole script <= 300 s (setups left when the budget is
# spent are skipped and say so). One failing setup never stops the others. Nothing interactive.
# The benchmark (env --deep against collect_env) is scripts/gpu/env2.sh's, not this script's.
# Usage: bash scripts/gpu/env_matrix.sh OUTDIR     (scripts/gpu_run.sh env_matrix does this)
# MATRIX_ONLY="setup setup ..." runs only those setups.
# Afterwards, here: python scripts/import_env_matrix.py OUTDIR   (redacts, writes fixtures)
. "$(dirname "$0")/lib/prelude.sh"
repo=$PWD
budget=${MATRIX_BUDGET:-300}
per_setup=25
tmp=/tmp/clinic-matrix   # a fixed name: the fixtures show these paths, and redaction keeps them
rm -rf "$tmp" && mkdir -p "$tmp"
summary="$out/summary.txt"
: >"$summary"
trap 'rm -rf "$tmp"' EXIT


# ---- facts about this machine (for the importer and the closing note)
timeout -k 2 10 nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader \
  >"$out/nvidia-smi.txt" 2>&1
wheel_cudnn=$(timeout -k 2 10 "$PY" -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null)
echo "wheel_cudnn=${wheel_cudnn:-none}" >"$out/machine.txt"
ls -l /usr/lib/x86_64-linux-gnu/libcudnn.so* >>"$out/machine.txt" 2>&1

# ---- prepared folders
partial="$tmp/cudnn-partial"
if [ -n "$wheel_cudnn" ] && [ -d "$wheel_cudnn" ]; then
  cp -a "$wheel_cudnn" "$partial" && rm -f "$partial"/libcudnn_engines_precompiled.so*
else
  mkdir -p "$partial"   # no wheel cuDNN here: the setup still runs, with an empty folder
fi
ls "$partial" >"$out/cudnn-partial.ls.txt" 2>&1
# A damaged cuDNN copy: the wheel's folder with every sub-library cut to half its size (the
# core stays whole: torch maps it from the wheel through its RPATH and loads the sub-libraries
# by name, so LD_LIBRARY_PATH decides where they come from).
damaged="$tmp/cudnn-damaged"
if [ -n "$wheel_cudnn" ] && [ -d "$wheel_cudnn" ]; then
  cp -a "$wheel_cudnn" "$damaged"
  for f in "$damaged"/libcudnn_*.so.*; do
    [ -L "$f" ] && continue
    truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"
  done
else
  mkdir -p "$damaged"
fi
ls -l "$damaged" >"$out/cudnn-damaged.ls.txt" 2>&1
printf 'this is not a shared library\n' >"$tmp/not-a-library.so"
mkdir -p "$tmp/fake-torch/torch"
cat >"$tmp/fake-torch/torch/__init__.py" <<'EOF'
raise ImportError("libtorch_cuda.so: cannot open shared object file: No such file or directory")
EOF

# name | env assignments (for `env`), in the order of tests/data/env/broken/expected.toml
setups=(
  "healthy|"
  "cvd-empty|CUDA_VISIBLE_DEVICES="
  "cvd-absent-index|CUDA_VISIBLE_DEVICES=7"
  "cvd-bogus-uuid|CUDA_VISIBLE_DEVICES=GPU-bogus-uuid"
  "cvd-duplicate|CUDA_VISIBLE_DEVICES=0,0"
  "ld-library-path-system-cudnn|LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu"
  "ld-preload-system-cudnn|LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
  "cudnn-sublibrary-missing|LD_LIBRARY_PATH=$partial"
  "torch-import-broken|PYTHONPATH=$tmp/fake-torch:$PYTHONPATH"
  "gpu-almost-full|"
  "debug-variables|CUDA_LAUNCH_BLOCKING=1 CUDNN_LOGINFO_DBG=1 CUDNN_LOGDEST_DBG=stderr TORCH_CUDNN_V8_API_DISABLED=1"
  "alloc-conf-malformed|PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True"
  "slow-settings|CUDA_MODULE_LOADING=EAGER NVIDIA_TF32_OVERRIDE=0"
  "damaged-cudnn-truncated|LD_LIBRARY_PATH=$damaged"
  "alloc-conf-bad-bool|PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true"
  "alloc-conf-bad-number|PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:10"
  "cublas-workspace-malformed|CUBLAS_WORKSPACE_CONFIG=4096:8"
  "ld-preload-not-a-library|LD_PRELOAD=$tmp/not-a-library.so"
  "nccl-p2p-disable-true|NCCL_P2P_DISABLE=true"
  "arch-list-misses-gpu|TORCH_CUDA_ARCH_LIST=7.5;8.0"
)
user_view_for=" ld-library-path-system-cudnn ld-preload-system-cudnn cudnn-sublibrary-missing alloc-conf-malformed damaged-cudnn-truncated alloc-conf-bad-bool alloc-conf-bad-number cublas-workspace-malformed ld-preload-not-a-library "
user_code='import torch
x = torch.randn(2, 3, 16, 16, device="cuda"); w = torch.randn(4, 3, 3, 3, device="cuda")
print(torch.nn.functional.conv2d(x, w).sum().item())'
# A user who set CUBLAS_WORKSPACE_CONFIG asked for determinism: what such a program meets.
user_code_cublas='import torch
torch.use_deterministic_algorithms(True)
a = torch.randn(64, 64, device="cuda"); print((a @ a).sum().item())'

hog_pid=""
start_hog() {
  rm -f "$tmp/hog.ready"
  timeout -k 2 90 "$PY" -c '
import sys, time, torch
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(free * 0.95), dtype=torch.uint8, device="cuda")
open(sys.argv[1], "w").write(f"{x.numel() >> 20} MiB of {total >> 20}\n")
time.sleep(80)' "$tmp/hog.ready" >"$out/gpu-almost-full.hog.txt" 2>&1 &
  hog_pid=$!
  for _ in $(seq 1 60); do
    [ -s "$tmp/hog.ready" ] && break
    kill -0 "$hog_pid" 2>/dev/null || break
    sleep 0.5
  done
  cat "$tmp/hog.ready" >>"$out/gpu-almost-full.hog.txt" 2>/dev/null
}
stop_hog() {
  [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null
  wait "$hog_pid" 2>/dev/null
  hog_pid=""
}

for entry in "${setups[@]}"; do
  name=${entry%%|*}
  assigns=${entry#*|}
  # MATRIX_ONLY="name name ...": run only these setups (scripts/gpu/env2short.sh)
  if [ -n "${MATRIX_ONLY:-}" ] && [[ " $MATRIX_ONLY " != *" $name "* ]]; then
    continue
  fi
  if [ "$(left)" -lt $(( per_setup + 10 )) ]; then
    log "$name SKIPPED (time budget spent)"
    continue
  fi
  echo "$assigns" >"$out/$name.env.txt"
  [ "$name" = gpu-almost-full ] && start_hog
  t0=$SECONDS
  # shellcheck disable=SC2086  # the assignments are words on purpose
  timeout -k 5 "$per_setup" env $assigns "$PY" -m core env --deep --json \
    >"$out/$name.json" 2>"$out/$name.stderr.txt"
  rc=$?
  took=$(( SECONDS - t0 ))
  if [[ "$user_view_for" == *" $name "* ]] && [ "$(left)" -gt 30 ]; then
    code=$user_code
    [ "$name" = cublas-workspace-malformed ] && code=$user_code_cublas
    # shellcheck disable=SC2086
    timeout -k 5 20 env $assigns "$PY" -X faulthandler -c "$code" >"$out/$name.user_view.txt" 2>&1
    echo "exit=$?" >>"$out/$name.user_view.txt"
  fi
  [ "$name" = gpu-almost-full ] && stop_hog
  first=$(timeout -k 2 10 "$PY" -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    f = d.get("findings") or []
    print(f[0]["id"] if f else "no-findings")
except Exception as e:
    print("unreadable:" + type(e).__name__)' "$out/$name.json" 2>/dev/null)
  log "$name rc=$rc ${took}s first=$first"
done

log "=== summary: $(grep -c ' rc=' "$summary") setups ran in $(( SECONDS - start ))s; import with: python scripts/import_env_matrix.py OUTDIR"
