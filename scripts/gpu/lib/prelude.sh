# Sourced first by the scripts in scripts/gpu/ (`. "$(dirname "$0")/lib/prelude.sh"`), so that
# each one starts the same way: its output folder ($1) created and named absolutely in $out, the
# repo root as working folder, the environment every GPU step runs in, and the helpers below.
# A script may set before sourcing: usage (its usage line), data_dir (the default
# CUDA_CLINIC_DATA_DIR); after: budget (seconds, for `left`), summary (the file `log` appends to).
set -u
out=${1:?usage: ${usage:-$(basename "$0") OUTDIR}}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.." || exit 2
export PYTHONPATH=${PYTHONPATH:-$PWD}
export PYTHONUNBUFFERED=1
export CUDA_CLINIC_DATA_DIR=${CUDA_CLINIC_DATA_DIR:-${data_dir:-/tmp/clinic-data}}
PY=${PYTHON:-python3}
start=$SECONDS

log() { echo "$*" | tee -a "${summary:?set summary before log}"; }
left() { echo $(( ${budget:?set budget before left} - (SECONDS - start) )); }
# Summarize one result JSON: the Python on stdin runs with `run` (the parsed JSON), `ident` and
# `seconds` set; a missing or unreadable JSON gives one `IDENT: NO RESULT ...` line instead,
# naming SEE (the file that says why).
# Usage: summarize_json JSON IDENT SECONDS SEE <<'PYEOF' ... PYEOF
summarize_json() {
  "$PY" -c "import json, sys
path, ident, seconds, see = sys.argv[1:5]
try:
    run = json.load(open(path))
except Exception as exc:
    print(f'{ident}: NO RESULT ({type(exc).__name__}) in {seconds}s, see {see}')
    raise SystemExit
$(cat)" "$@"
}
