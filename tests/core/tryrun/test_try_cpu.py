"""`cuda-clinic try` end to end on the CPU: real scripts, the real CLI, real child processes."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from core.history import History
from core.tryrun.model import TryResult
from tests.core.tryrun.helpers import as_json, run_try, script

PY = sys.executable


def test_fp16_into_fp32_lstm_has_no_no_code_fix_and_shows_the_code_change() -> None:
    proc = run_try("--fixes", "--python", PY, "--", "python", script("lstm_fp16_into_fp32.py"))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "cuda/rnn-dtype-mismatch" in out
    assert (
        "no no-code fix: cuda/rnn-dtype-mismatch has no fix that works without changing code" in out
    )
    assert "x = x.to(dtype=p.dtype, device=p.device)" in out  # the KB's verified code change
    # The frame is the user's own line, not torch's.
    assert "lstm_fp16_into_fp32.py:15 in forward: out, _ = self.rnn(x)" in out
    assert "[fix:" not in out  # nothing was re-run


def test_torch_not_compiled_with_cuda_is_matched_and_saved() -> None:
    proc = run_try("--json", "--python", PY, "--", "python", script("torch_not_compiled_cuda.py"))
    data = as_json(proc)
    assert data["status"] == "failed"
    assert data["entry"]["id"] == "cuda/torch-not-compiled-with-cuda"
    assert data["entry"]["confidence"] >= 0.5
    assert any(
        "Torch not compiled with CUDA enabled" in e["text"] for e in data["entry"]["evidence"]
    )
    assert data["frame"]["code"] == "model = model.cuda()"
    assert data["time_to_failure_s"] > 0
    with History.open() as history:
        stored = history.get_try(data["id"], TryResult)
    assert stored.entry is not None and stored.entry.id == "cuda/torch-not-compiled-with-cuda"
    assert stored.command[-1].endswith("torch_not_compiled_cuda.py")


def test_a_hang_is_stopped_at_the_timeout_with_the_helper_it_detached() -> None:
    started = time.monotonic()
    proc = run_try("--json", "--timeout", "4", "--", PY, script("hang.py"))
    elapsed = time.monotonic() - started
    data = as_json(proc)
    assert proc.returncode == 1
    assert data["status"] == "timed_out"
    assert data["original"]["status"] == "timed_out"
    assert elapsed < 30
    helper = int(data["original"]["log"].split("helper ", 1)[1].split()[0])
    # The helper left the process group (start_new_session); it must be gone all the same.
    alive = True
    try:
        os.kill(helper, 0)
        state = Path(f"/proc/{helper}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        alive = state != "Z"
    except ProcessLookupError:
        alive = False
    if alive:
        os.kill(helper, signal.SIGKILL)
    assert not alive, f"helper {helper} survived the timeout"
    assert data["original"]["strays_killed"] >= 1


def test_a_flood_of_output_is_bounded_and_its_error_still_found() -> None:
    proc = run_try("--json", "--", PY, script("flood.py"))
    data = as_json(proc)
    original = data["original"]
    assert original["lines_total"] >= 300_000
    assert original["lines_dropped"] > 290_000
    assert len(original["log"]) < 1_000_000  # ~19 MB printed
    assert "step 0 loss" in original["log"]  # the head is kept...
    assert "Torch not compiled with CUDA enabled" in original["log"]  # ...and the tail
    assert data["entry"]["id"] == "cuda/torch-not-compiled-with-cuda"
    assert data["frame"]["file"].endswith("flood.py")


def test_deterministic_error_is_fixed_by_a_switch_and_the_rerun_is_shown(tmp_path: Path) -> None:
    # The user's own sitecustomize (first on PYTHONPATH) must still run under the shim.
    user_site = tmp_path / "usersite"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text(
        "import sys\nsys.stderr.write('user sitecustomize ran\\n')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(user_site))
    work = tmp_path / "project"
    work.mkdir()
    before = sorted(p.name for p in work.iterdir())
    proc = run_try(
        "--fixes", "--json", "--cwd", str(work), "--", PY, script("deterministic_put.py"), env=env
    )
    data = as_json(proc)
    assert proc.returncode == 0, proc.stderr
    assert data["entry"]["id"] == "cuda/nondeterministic-op"
    runs = {r["fix"]["id"]: r for r in data["fixes"]}
    warn = runs["deterministic-warn-only"]
    assert warn["verdict"] == "fixed"
    assert "clean exit" in warn["reason"]
    assert "warn_only=True" in warn["shim"]  # the exact shim is saved with the result
    assert warn["env_changes"]["PYTHONPATH"].startswith("<shim folder>")
    log = warn["outcome"]["log"]
    assert "[cuda-clinic try] applied: deterministic-warn-only" in log
    assert "user sitecustomize ran" in log  # chained
    assert "training finished" in log
    assert data["recommendation"]["kind"] == "fix"
    assert data["recommendation"]["fix"] == "deterministic-warn-only"
    assert sorted(p.name for p in work.iterdir()) == before  # nothing written into the project


def test_until_marker_earns_fixed_and_measures_the_cost(tmp_path: Path) -> None:
    proc = run_try(
        "--fixes", "--json", "--until", r"step 1 done", "--", PY, script("deterministic_put.py")
    )
    data = as_json(proc)
    off = next(r for r in data["fixes"] if r["fix"]["id"] == "deterministic-off")
    assert off["verdict"] == "fixed"
    assert "--until marker" in off["reason"]
    assert off["outcome"]["marker_line"] == "step 1 done"
    # The original printed 'deterministic mode on' before failing: that marker proves nothing.
    early = as_json(
        run_try("--json", "--until", "deterministic mode", "--", PY, script("deterministic_put.py"))
    )
    assert "printed the --until marker before failing" in early["message"]


def test_command_not_found_not_executable_and_quick_exit_get_one_line(tmp_path: Path) -> None:
    proc = run_try("--", "no-such-program-xyz")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "cuda-clinic: error: try: no-such-program-xyz: command not found on PATH"
    )
    plain = tmp_path / "train.sh"
    plain.write_text("echo hi\n")
    proc = run_try("--cwd", str(tmp_path), "--", "./train.sh")
    assert proc.returncode == 2
    assert "not executable" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = run_try("--", "true")
    assert proc.returncode == 0
    assert "exited 0 at once" in proc.stdout and "nothing to diagnose" in proc.stdout
    proc = run_try("--cwd", str(tmp_path / "missing"), "--", "true")
    assert proc.returncode == 2 and "no such folder" in proc.stderr
    proc = run_try("--")
    assert proc.returncode == 2 and "no command given" in proc.stderr


def test_missing_script_or_broken_interpreter_is_one_line_before_anything_runs(
    tmp_path: Path,
) -> None:
    proc = run_try("--cwd", str(tmp_path), "--", "python3", "nosuch.py")
    assert proc.returncode == 2
    assert proc.stderr == f"cuda-clinic: error: try: nosuch.py: no such file (in {tmp_path})\n"
    assert proc.stdout == ""  # nothing ran, nothing was matched or saved
    with History.open() as history:
        assert history.try_runs() == []
    proc = run_try("--cwd", str(tmp_path), "--", PY, "-X", "dev", "gone/train.py", "--bs", "4")
    assert proc.returncode == 2 and "gone/train.py: no such file" in proc.stderr
    # An interpreter that cannot start (a venv whose base Python was removed) is named.
    broken = tmp_path / "venv" / "bin" / "python3"
    broken.parent.mkdir(parents=True)
    broken.write_text("#!/nonexistent/python3.9\n")
    broken.chmod(0o755)
    (tmp_path / "train.py").write_text("print('hi')\n")
    proc = run_try("--cwd", str(tmp_path), "--", str(broken), "train.py")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert f"try: cannot start {broken}" in proc.stderr
    # -m and -c have no script file to check; they run as usual.
    proc = run_try("--cwd", str(tmp_path), "--", PY, "-c", "print('fine')")
    assert proc.returncode == 0 and "exited 0" in proc.stdout


def test_cuda_only_fixes_are_cant_test_here_on_a_cpu_only_torch() -> None:
    """The simulated device-side assert matches an entry whose fixes are CUDA variables; this
    interpreter's torch is a CPU build, so they are not re-run and never read "still fails"."""
    proc = run_try("--fixes", "--json", "--", PY, script("async_error_sim.py"))
    assert proc.returncode == 1
    data = as_json(proc)
    assert data["entry"]["id"] == "cuda/device-side-assert"
    assert data["frame"]["function"] == "synchronize"  # where the error surfaced
    assert "torch" in data["machine"]["line"] and data["machine"]["torch_cuda"] in (None, "")
    for run in data["fixes"]:
        assert run["verdict"] == "cannot_test"
        assert "CPU-only build" in run["reason"] and run["outcome"] is None  # not re-run
    answer = data["answer"]
    assert answer["cause"]["id"] == "embedding-index-out-of-range"
    assert answer["where"]["function"] == "synchronize"
    untested = [f for f in answer["fixes"] if f["status"] == "cant_test_here"]
    assert {f["fix_id"] for f in untested} == {"launch-blocking", "device-side-assertions"}
    assert all(f["sure"].startswith("can't test here: torch ") for f in untested)
    assert not any(f["status"] == "failed_here" for f in answer["fixes"])
    text = run_try("--fixes", "--no-save", "--", PY, script("async_error_sim.py")).stdout
    assert "-> can't test here: torch " in text and "still fails" not in text


def test_launch_blocking_run_is_judged_located_at_its_real_line(tmp_path: Path) -> None:
    """The verdict itself, on the real child runs a GPU machine would make (the GPU evidence
    in tests/data/try/gpu shows the same on an H200)."""
    from core.contain import run_contained
    from core.kb import open_kb
    from core.tryrun.judge import judge
    from core.tryrun.locate import user_frame

    argv = [PY, script("async_error_sim.py")]
    roots = [Path(script("async_error_sim.py")).parent]
    original = run_contained(argv, cwd=str(tmp_path), env=dict(os.environ), timeout=60)
    blocking = run_contained(
        argv, cwd=str(tmp_path), env={**os.environ, "CUDA_LAUNCH_BLOCKING": "1"}, timeout=60
    )
    frame = user_frame(original.text(), roots)
    assert frame is not None and frame["function"] == "synchronize"
    with open_kb() as kb:
        verdict, reason, located, _new = judge(
            kind="diagnose",
            outcome=blocking,
            original_ttf=original.wall_s,
            targets=["cuda/device-side-assert"],
            original_frame=frame,
            kb=kb,
            roots=roots,
        )
    assert verdict == "located" and "the original run pointed at" in reason
    assert located is not None and located["function"] == "lookup"
    assert located["code"] == "raise RuntimeError(ERROR)"
