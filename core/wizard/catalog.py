"""The six scenarios, declared as data: repro, workarounds, what counts as reproduced and fixed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.wizard.model import Requirements, Scenario, Step
from core.wizard.perf import summarize_rnn_performance

Value = Mapping[str, Any]

OFF_RNN = """with torch.backends.cudnn.flags(enabled=False):
    output, _ = rnn(x)          # only the RNN forward; convs keep cuDNN"""


def _db(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    params = {"rnn": "lstm_proj", **kw.pop("params", {})}
    return Step(name, title, "rnn_double_backward.py", "variant", params, snippet, **kw)


DOUBLE_BACKWARD = Scenario(
    id="cuda/cudnn-rnn-double-backward",
    title="Double backward (gradient penalty) through a cuDNN RNN",
    summary="A WGAN-GP style gradient penalty through nn.LSTM(proj_size=...) on the GPU, then "
    "each suggested change: GRU, no projection, retain_graph, cuDNN off for the RNN forward, "
    "cuDNN off for the whole step, a hand-written LSTMCell loop.",
    requirements=Requirements(cuda=True, min_free_mb=512),
    repro=Step(
        "repro",
        "Gradient penalty through nn.LSTM(proj_size) with cuDNN",
        "rnn_double_backward.py",
        "repro",
        {"rnn": "lstm_proj"},
    ),
    workarounds=(
        _db(
            "remove-proj-size",
            "Remove proj_size (plain nn.LSTM)",
            "nn.LSTM(input_size, hidden_size)",
            params={"rnn": "lstm"},
            claim_fixes=True,
            claim="Seed: switching to a non-projected LSTM fixes it (claimed 85% success)",
        ),
        _db(
            "switch-to-gru",
            "Switch to nn.GRU",
            "nn.GRU(input_size, hidden_size)",
            params={"rnn": "gru"},
            claim_fixes=True,
            claim="Seed: GRU has broader double backward support (claimed 85% success)",
        ),
        _db(
            "retain-graph",
            "Pass retain_graph=True",
            "loss.backward(retain_graph=True)",
            params={"retain_graph": True},
            claim_fixes=False,
            claim="Seed dead end: retain_graph=True does not prevent the error",
        ),
        _db(
            "disable-cudnn-rnn-forward",
            "cuDNN off around the RNN forward only",
            OFF_RNN,
            params={"cudnn": "off-rnn"},
        ),
        _db(
            "disable-cudnn-whole-step",
            "cuDNN off for the whole training step",
            "torch.backends.cudnn.enabled = False",
            params={"cudnn": "off-step"},
            claim_fixes=False,
            claim="Seed dead end: cudnn.enabled=False still fails (claimed 70% fail)",
        ),
        _db(
            "lstmcell-loop",
            "Hand-written nn.LSTMCell loop",
            "cell = nn.LSTMCell(input_size, hidden_size)  # loop over time steps",
            params={"rnn": "lstmcell"},
        ),
    ),
    signature=r"derivative for '?_cudnn_rnn_backward'? is not implemented|Double backwards is not "
    r"supported for CuDNN RNNs|CudnnRNNLegacyBackward is not differentiable twice",
    seed="000_d8963b8688f4a673.txt",
)

DTYPE = Scenario(
    id="cuda/rnn-dtype-mismatch",
    title="fp16 input into an fp32 LSTM",
    summary="An fp16 batch fed to an fp32 nn.LSTM, then the three fixes: cast the input, "
    "convert the model, autocast with a GradScaler training step. Runs on the CPU too.",
    requirements=Requirements(cuda=False),
    repro=Step("repro", "fp16 input, fp32 nn.LSTM", "rnn_dtype.py", "repro"),
    workarounds=(
        Step(
            "cast-input",
            "Cast the input to the weights' dtype",
            "rnn_dtype.py",
            "fix",
            {"variant": "cast-input"},
            "x = x.to(next(rnn.parameters()).dtype)",
            claim="Seed: cast the input to float32",
            claim_fixes=True,
        ),
        Step(
            "cast-model",
            "Convert the model to fp16",
            "rnn_dtype.py",
            "fix",
            {"variant": "cast-model"},
            "model = model.half()",
        ),
        Step(
            "autocast",
            "autocast(fp16) with a GradScaler training step",
            "rnn_dtype.py",
            "fix",
            {"variant": "autocast"},
            "with torch.autocast(device_type, dtype=torch.float16):\n    out, _ = model(x)\n"
            "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()",
            claim="Seed: use autocast and GradScaler",
            claim_fixes=True,
        ),
    ),
    signature=r"RNN input dtype \(torch\.\w+\) does not match weight dtype|input must have the "
    r"type torch\.\w+, got type torch\.\w+|Input and parameter tensors are not the same dtype|"
    r"expected scalar type \w+ but found \w+",
    seed="001_672ce292ffb7b645.txt",
)


def _conv_ok(value: Value, _ctx: Value) -> bool:
    return bool(value.get("conv_ok"))


def _ni(name: str, title: str, snippet: str = "", **kw: Any) -> Step:
    return Step(
        name,
        title,
        "cudnn_pressure.py",
        "first_cudnn_op",
        {"variant": name},
        snippet,
        isolated=True,
        fixed_when=_conv_ok,
        fixed_note="the first conv2d runs",
        cost_metric="",
        **kw,
    )


NOT_INITIALIZED = Scenario(
    id="cuda/cudnn-status-not-initialized",
    title="The first cuDNN op with the GPU almost full",
    summary="In a fresh process, fill the GPU with ordinary allocations to a few MB free, then "
    "run the first conv2d (cuDNN creates its handle lazily). Then the fixes and the seed's "
    "claims, each in its own fresh process.",
    requirements=Requirements(cuda=True, min_free_mb=256),
    repro=_ni("repro", "First conv2d with a few MB free"),
    workarounds=(
        _ni(
            "free-gpu-memory",
            "Leave 1 GB free (smaller batch/model, other jobs stopped)",
            "nvidia-smi   # then reduce the batch or stop other processes",
        ),
        _ni(
            "warmup-conv",
            "Run one tiny conv before memory fills up",
            "F.conv2d(torch.zeros(1, 1, 8, 8, device='cuda'),\n"
            "         torch.zeros(1, 1, 3, 3, device='cuda'))",
        ),
        _ni("disable-cudnn-whole-step", "Disable cuDNN", "torch.backends.cudnn.enabled = False"),
        _ni(
            "empty-cache",
            "torch.cuda.empty_cache() with the memory held by live tensors",
            "torch.cuda.empty_cache()",
            claim_fixes=True,
            claim="Seed: torch.cuda.empty_cache() can alleviate it",
        ),
        _ni(
            "empty-cache-cached-blocks",
            "torch.cuda.empty_cache() when the memory is only cached",
            "del tensors; torch.cuda.empty_cache()",
        ),
        _ni(
            "benchmark-true",
            "torch.backends.cudnn.benchmark = True",
            "torch.backends.cudnn.benchmark = True",
            claim_fixes=True,
            claim="Seed: benchmark=True initializes cuDNN and often addresses the error",
        ),
        _ni(
            "is-available-check",
            "Check torch.cuda.is_available() first",
            "if torch.cuda.is_available(): ...",
            claim_fixes=True,
            claim="Seed: check torch.cuda.is_available() to establish the CUDA context",
        ),
    ),
    signature=r"CUDNN_STATUS_NOT_INITIALIZED",
    related_signature=r"CUDNN_STATUS_(INTERNAL_ERROR|ALLOC_FAILED|EXECUTION_FAILED)|"
    r"CUBLAS_STATUS_ALLOC_FAILED|out of memory",
    fixes_need_failure=False,  # a clean repro: the variants are further attempts
    seed="002_8312279528655ada.txt",
)


HEADROOM_MB = 4  # what the GPU leaves free beyond the conv's own tensors, for its workspace


def _cv(name: str, title: str, snippet: str, params: dict[str, Any], **kw: Any) -> Step:
    params = {"headroom_mb": HEADROOM_MB, **params}  # the repro's headroom unless changed
    return Step(
        name,
        title,
        "cudnn_pressure.py",
        "conv_under_pressure",
        params,
        snippet,
        isolated=True,
        fixed_when=_conv_ok,
        fixed_note="the convolution runs",
        cost_metric="per_sample_ms",
        **kw,
    )


CONV_ALGO = Scenario(
    id="cuda/cudnn-no-valid-conv-algorithm",
    title="A large convolution with little GPU memory left for its workspace",
    summary="The first run of a 64-channel 3x3 convolution on a 32x128x128 batch. Its input, "
    "weight and output memory are allocated first, then the GPU is filled until only "
    f"{HEADROOM_MB} MB stay free for cuDNN's algorithm choice and workspace (cuDNN and cuBLAS "
    "handles created beforehand), benchmark off as PyTorch's default; then about 0 MB spare, "
    "benchmark on, the seed's benchmark=False + deterministic=True, a smaller batch in the "
    "same memory, 1 GB spare and cuDNN disabled, each with the same headroom. Only cuDNN's own "
    "'no valid algorithm / unable to find an engine' error counts as reproduced.",
    requirements=Requirements(cuda=True, min_free_mb=1024),
    repro=_cv("repro", f"Conv with {HEADROOM_MB} MB spare, benchmark off", "", {}),
    workarounds=(
        _cv(
            "no-headroom",
            "The same conv with about 0 MB spare (a harsher repro, not a fix)",
            "",
            {"headroom_mb": 0},
        ),
        _cv(
            "free-gpu-memory",
            "Leave 1 GB spare",
            "nvidia-smi   # one process per GPU",
            {"headroom_mb": 1024},
        ),
        _cv(
            "smaller-batch",
            "Batch 8 instead of 32 in the same memory",
            "batch_size = 8",
            {"batch": 8, "fill_for_batch": 32},
        ),
        _cv(
            "benchmark-true",
            "cudnn.benchmark = True (FIND instead of GET)",
            "torch.backends.cudnn.benchmark = True",
            {"benchmark": True},
        ),
        _cv(
            "benchmark-off-deterministic",
            "cudnn.benchmark = False, cudnn.deterministic = True",
            "torch.backends.cudnn.benchmark = False\ntorch.backends.cudnn.deterministic = True",
            {"benchmark": False, "deterministic": True},
            claim_fixes=True,
            claim="Seed: benchmark=False and deterministic=True force reliable algorithms",
        ),
        _cv(
            "disable-cudnn-whole-step",
            "Disable cuDNN (native convolution)",
            "torch.backends.cudnn.enabled = False",
            {"cudnn": False},
        ),
    ),
    signature=r"Unable to find a valid cuDNN algorithm to run convolution|(GET|FIND) was unable "
    r"to find an engine to execute this computation|no valid convolution algorithms available",
    related_signature=r"out of memory|CUDNN_STATUS_|ALLOC_FAILED",
    fixes_need_failure=False,  # a clean repro: the variants are further attempts
    baseline_step="free-gpu-memory",
    seed="003_dcaec3665fdd5f8e.txt",
)


def _ratio_at_least(key: str, threshold: float) -> Any:
    def check(value: Value, _ctx: Value) -> bool:
        ratio = value.get(key)
        return isinstance(ratio, int | float) and ratio >= threshold

    return check


def _faster_than_slow_paths(value: Value, ctx: Value) -> bool:
    slow = (ctx.get("repro") or {}).get("slow_ms")
    fast = value.get("cudnn_ms")
    return isinstance(slow, int | float) and isinstance(fast, int | float) and fast * 1.5 <= slow


def _mostly_faster(value: Value, _ctx: Value) -> bool:
    ratios = [r for r in value.get("misaligned_over_aligned") or [] if isinstance(r, int | float)]
    return bool(ratios) and sum(r >= 1.05 for r in ratios) * 2 > len(ratios)


def _flatten_fixes(value: Value, _ctx: Value) -> bool:
    return bool(value.get("warning_before")) and not value.get("warning_after")


def _rp(name: str, title: str, function: str, snippet: str, **kw: Any) -> Step:
    return Step(
        name, title, "rnn_perf.py", function, {}, snippet, timeout_s=180.0, cost_metric="", **kw
    )


RNN_PERFORMANCE = Scenario(
    id="cuda/cudnn-rnn-performance",
    title="What makes a cuDNN LSTM fast: the seed's criteria, measured",
    summary="Forward+backward of a 1-layer LSTM (T=50): an nn.LSTMCell loop and nn.LSTM without "
    "cuDNN against cuDNN, aligned against misaligned sizes, fp32 (TF32 on/off), fp16 and "
    "bf16, and weights moved out of cuDNN's flat buffer (`weight_hh_l0.data = ...clone()`) "
    "before and after flatten_parameters() (time, peak memory, the warning).",
    requirements=Requirements(cuda=True, min_free_mb=2048),
    repro=_rp(
        "slow-paths",
        "The slow paths: LSTMCell loop, nn.LSTM without cuDNN",
        "slow_paths",
        "",
        claim="Seed: a custom cell falls back to a slow path",
        claim_fixes=None,
    ),
    workarounds=(
        _rp(
            "cudnn-vs-lstmcell",
            "nn.LSTM on cuDNN",
            "cudnn_lstm",
            "rnn = nn.LSTM(input_size, hidden_size).cuda()",
            fixed_when=_faster_than_slow_paths,
            fixed_note="cuDNN is at least 1.5x faster than the faster slow path",
        ),
        _rp(
            "aligned-sizes",
            "Hidden and batch sizes multiples of 8",
            "alignment",
            "nn.LSTM(512, 1024)  # not 511/1023; batch 128, not 127",
            fixed_when=_mostly_faster,
            fixed_note="most aligned sizes are >=5% faster than the smaller misaligned ones",
        ),
        _rp(
            "tf32",
            "Keep cuDNN TF32 on for fp32 (the default)",
            "tf32",
            "torch.backends.cudnn.allow_tf32 = True",
            fixed_when=_ratio_at_least("strict_over_tf32", 1.1),
            fixed_note="strict fp32 is >=10% slower than TF32",
        ),
        _rp(
            "fp16",
            "fp16 for a large aligned LSTM",
            "precision",
            'with torch.autocast("cuda", dtype=torch.float16): ...',
            fixed_when=_ratio_at_least("fp16_speedup_large", 1.1),
            fixed_note="fp16 is >=10% faster than fp32 at 512/1024/128",
            claim="Seed: cuDNN works most efficiently on float32",
            claim_fixes=False,
        ),
        _rp(
            "flatten-parameters",
            "flatten_parameters() after `param.data = ...` scattered the weights",
            "flatten",
            "self.rnn.flatten_parameters()  # at the start of forward()",
            fixed_when=_flatten_fixes,
            fixed_note="the non-contiguous weights warning disappears",
        ),
    ),
    reproduced_when=lambda value, _ctx: bool(value.get("rows")),
    reproduced_note="the slow paths were measured",
    fixes_need_failure=False,
    seed="004_87a5edfe3494d430.txt",
    summarize=summarize_rnn_performance,
)


def _matches_eval(value: Value, _ctx: Value) -> bool:
    return bool(value.get("outputs_match_eval"))


def _ev(name: str, title: str, snippet: str) -> Step:
    return Step(
        name,
        title,
        "rnn_eval_backward.py",
        "fix",
        {"variant": name},
        snippet,
        fixed_when=_matches_eval,
        fixed_note="backward runs and the outputs stay within 1% of the eval-mode outputs",
    )


EVAL_BACKWARD = Scenario(
    id="cuda/cudnn-rnn-eval-backward",
    title="Backward through a cuDNN RNN in eval mode (saliency, attribution)",
    summary="Input gradients of an LSTM tagger in eval() on the GPU, then the fixes: cuDNN off "
    "around the RNN forward, only the RNN in train mode with dropout 0, the whole model in "
    "train mode (which changes the outputs).",
    requirements=Requirements(cuda=True, min_free_mb=512),
    repro=Step("repro", "Input gradients with model.eval()", "rnn_eval_backward.py", "repro"),
    workarounds=(
        _ev("disable-cudnn-rnn-forward", "cuDNN off around the RNN forward", OFF_RNN),
        _ev(
            "rnn-train-mode",
            "Only the RNN in train mode, dropout 0",
            "model.eval(); model.rnn.train(); model.rnn.dropout = 0.0",
        ),
        _ev("model-train-mode", "The whole model in train mode", "model.train()"),
    ),
    signature=r"cudnn RNN backward can only be called in training mode|backward_input can only "
    r"be called in training mode",
)

SCENARIOS: tuple[Scenario, ...] = (
    DOUBLE_BACKWARD,
    DTYPE,
    NOT_INITIALIZED,
    CONV_ALGO,
    RNN_PERFORMANCE,
    EVAL_BACKWARD,
)
