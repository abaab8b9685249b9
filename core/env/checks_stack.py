"""Checks from evidence: torch's own exceptions, the cuDNN file really mapped, variables set."""

from __future__ import annotations

import os
import re

from core.env.compat import version_tuple
from core.env.model import Environment, Finding, TorchError
from core.env.remedy import cudnn_remedy, path_route

_INCOMPATIBLE = re.compile(r"cuDNN version incompatibility", re.IGNORECASE)
_ALLOC_CONF = re.compile(
    r"allocator (?:config|option)|CachingAllocator|PYTORCH_CUDA_ALLOC_CONF|expandable_segments"
    r"|ConfigTokenizer|AllocatorConfig",
    re.IGNORECASE,
)
# Variables people set to debug and forget: what each one costs.
DEBUG_VARIABLES = {
    "CUDNN_LOGINFO_DBG": "cuDNN logs every API call",
    "CUDNN_LOGLEVEL_DBG": "cuDNN logs every API call",
    "CUDNN_LOGERR_DBG": "cuDNN logs errors of every call",
    "CUDNN_LOGWARN_DBG": "cuDNN logs warnings of every call",
    "CUBLAS_LOGINFO_DBG": "cuBLAS logs every API call",
    "CUBLASLT_LOG_LEVEL": "cuBLASLt logs its calls",
    "TORCH_CUDNN_V8_API_DISABLED": "torch falls back to cuDNN's legacy API (slower convolutions)",
    "TORCH_CUDNN_V8_API_DEBUG": "torch logs every cuDNN plan",
    "TORCH_SHOW_CPP_STACKTRACES": "every exception builds a C++ stack trace",
    "TORCH_USE_CUDA_DSA": "device-side assertions are compiled in (only for source builds)",
    "NCCL_DEBUG": "NCCL logs",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "every allocation goes to cudaMalloc (much slower)",
}
_OFF_VALUES = ("", "0", "false", "off", "no", "warn", "version")


def kb_for(text: str) -> str:
    """The KB entry the matcher confidently picks for `text`, or "" (also when no KB opens)."""
    if not text.strip():
        return ""
    try:
        from core.kb import match as kb_match
        from core.kb import open_kb

        with open_kb() as kb:
            report = kb_match(text, kb, top=1)
    except Exception:  # a missing or broken KB must not break `env`
        return ""
    return report.headline or ""


def _first_error(env: Environment, pattern: re.Pattern[str]) -> TorchError | None:
    return next((e for e in env.torch.errors if pattern.search(e.message)), None)


def check_cudnn_runtime(env: Environment) -> list[Finding]:
    """torch refuses the cuDNN it loaded (or would): its own message, where that copy came from."""
    torch, cudnn = env.torch, env.cudnn
    error = _first_error(env, _INCOMPATIBLE)
    runtime, compile_ = torch.cudnn_runtime, torch.cudnn_compile
    mismatch = False
    if runtime and compile_:
        have, want = version_tuple(runtime), version_tuple(compile_)
        mismatch = len(have) >= 2 and len(want) >= 2 and (have[0] != want[0] or have < want)
    if error is None and not mismatch:
        return []
    version = runtime or cudnn.version or "another version"
    where = cudnn.loaded_from or "an unknown folder"
    route = path_route(env, cudnn.loaded_from)
    via = f" (found through {route})" if route else ""
    said = error.text if error else f"compiled against {compile_}, runtime {runtime}"
    command, action = cudnn_remedy(env, cudnn.loaded_from)
    return [
        Finding(
            "cudnn.runtime-incompatible",
            "error",
            f"torch refuses the cuDNN it loaded: cuDNN {version} from {where}{via}, while torch "
            f"was compiled against {compile_ or 'another version'}.",
            action,
            command=command,
            evidence=said,
            kb=kb_for(said) if error else "cuda/cudnn-version-incompatible",
        )
    ]


def check_cudnn_parts(env: Environment) -> list[Finding]:
    """A folder cuDNN files were mapped from that lacks some of cuDNN 9's sub-libraries."""
    out = []
    for folder, missing in env.cudnn.missing_parts.items():
        route = path_route(env, folder)
        command, action = cudnn_remedy(env, folder)
        said = next((e.text for e in env.torch.errors if "cudnn" in e.message.lower()), "")
        mapped = [
            lib.name
            for lib in env.loaded_libraries
            if (lib.family or "").startswith("cudnn")
            and os.path.realpath(lib.directory) == os.path.realpath(folder)
        ]
        lacks = ", ".join(m + ".so.*" for m in missing)
        out.append(
            Finding(
                "cudnn.sublibrary-missing",
                "error",
                f"{folder} is an incomplete cuDNN copy"
                + (f" found through {route}" if route else "")
                + f": it lacks {lacks}"
                + (f", yet torch loaded {', '.join(mapped)} from it" if mapped else "")
                + (
                    "; cuDNN failed at its first use of the missing part (torch's words below)."
                    if said
                    else "; cuDNN fails when it needs a missing part, or takes it elsewhere."
                ),
                action,
                command=command,
                evidence=said,
                # The cause is a cuDNN library that cannot be loaded, whatever status cuDNN
                # reports for it (CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE on torch 2.11).
                kb="cuda/cudnn-library-load-failed",
            )
        )
    return out


def check_alloc_conf(env: Environment) -> list[Finding]:
    """A malformed PYTORCH_CUDA_ALLOC_CONF: torch refuses it at its first CUDA allocation."""
    from core.env.allocconf import problems

    name = "PYTORCH_CUDA_ALLOC_CONF"
    value = env.env_vars.get(name)
    if value is None:
        name, value = "PYTORCH_ALLOC_CONF", env.env_vars.get("PYTORCH_ALLOC_CONF")
    if value is None:
        return []
    error = _first_error(env, _ALLOC_CONF)
    wrong = problems(value)
    if error is None and not wrong:
        return []
    said = "; ".join(wrong) if wrong else "torch refuses it"
    died = (env.probe.get("deep") or {}).get("error")
    consequence = "torch raises at its first CUDA allocation, so every CUDA allocation fails" + (
        f" (with it set, the deep probe {died})" if died and not error else ""
    )
    return [
        Finding(
            "env.alloc-conf-invalid",
            "error",
            f"{name}={value!r} is malformed: {said}. {consequence}.",
            "Unset it, or fix the option (comma-separated key:value pairs such as "
            "expandable_segments:True).",
            command=f"unset {name}",
            evidence=error.text if error else "",
            kb=kb_for(error.text) if error else "",
        )
    ]


def check_variables(env: Environment) -> list[Finding]:
    """Debugging and slowing variables left set; CUDA_VISIBLE_DEVICES listing a GPU twice."""
    out: list[Finding] = []
    cvd = env.env_vars.get("CUDA_VISIBLE_DEVICES")
    if cvd:
        entries = [p.strip() for p in cvd.split(",") if p.strip()]
        repeated = sorted({p for p in entries if entries.count(p) > 1})
        if repeated:
            out.append(
                Finding(
                    "env.cuda-visible-devices-duplicate",
                    "warning",
                    f"CUDA_VISIBLE_DEVICES={cvd!r} lists {', '.join(repeated)} more than once: "
                    "CUDA ignores the list from the repeated entry on, so fewer GPUs are "
                    "visible than the list suggests.",
                    "List each GPU once.",
                    command=f"export CUDA_VISIBLE_DEVICES={','.join(dict.fromkeys(entries))}",
                )
            )
    set_debug = [
        f"{name}={env.env_vars[name]} ({why})"
        for name, why in DEBUG_VARIABLES.items()
        if env.env_vars.get(name) is not None
        and env.env_vars[name].strip().lower() not in _OFF_VALUES
    ]
    if set_debug:
        out.append(
            _unset_these(
                "env.debug-variables",
                "Debugging variables are set",
                set_debug,
                "Unset them once the debugging is done.",
            )
        )
    slow = []
    if env.env_vars.get("NVIDIA_TF32_OVERRIDE") == "0":
        slow.append(
            "NVIDIA_TF32_OVERRIDE=0 (TF32 tensor cores off for every library: float32 "
            "matmuls and convolutions run several times slower on Ampere and newer)"
        )
    if (env.env_vars.get("CUDA_MODULE_LOADING") or "").upper() == "EAGER":
        slow.append(
            "CUDA_MODULE_LOADING=EAGER (every kernel loads at start: slower start, "
            "hundreds of MiB more GPU memory per process)"
        )
    if slow:
        out.append(
            _unset_these(
                "env.slow-settings",
                "Settings that slow every run are set",
                slow,
                "Unset them unless you need them for a measurement.",
            )
        )
    return out


def _unset_these(code: str, lead: str, items: list[str], advice: str) -> Finding:
    """A warning listing `NAME=value (why)` items, with the command that unsets every NAME."""
    names = [item.split("=")[0] for item in items]
    return Finding(
        code,
        "warning",
        f"{lead}: " + "; ".join(items) + ".",
        advice,
        command="unset " + " ".join(names),
    )
