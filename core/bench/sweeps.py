"""What each sweep measures: the configurations, their groups, skips with reasons, and the work
(FLOPs and the fewest bytes) that turns a time into a share of the device's measured peak."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TypedDict

from core.bench.model import Ceilings, Config, Device, Group, Params, Skipped

KINDS = ("lstm", "conv")
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
GPU_DTYPES = ("fp32", "tf32", "fp16", "bf16")

CUDNN_ON_CPU = "cuDNN runs only on NVIDIA GPUs; on the CPU nn.LSTM uses ATen's own kernels"
TF32_ON_CPU = "TF32 is an NVIDIA Tensor Core mode (compute capability 8.0+); CPUs have no TF32"
HALF_LSTM_ON_CPU = (
    "half-precision LSTMs are a GPU optimisation; on the CPU they take generic fallback paths, "
    "so a time would not tell you anything about the GPU path"
)
FP16_CONV_ON_CPU = (
    "float16 convolutions on the CPU take a slow fallback path unless the CPU has native fp16 "
    "units; the time would not describe a GPU"
)
CUDNN_SWITCH_ON_CPU = (
    "cudnn.benchmark and cudnn.deterministic only change cuDNN's algorithm choice; the CPU does "
    "not use cuDNN"
)
NO_TF32_GPU = "this GPU has no TF32 Tensor Cores (needs compute capability 8.0+)"
NO_BF16_GPU = "torch reports no bfloat16 support on this GPU"


class Timing(TypedDict):
    """A configuration's repeat budget (the harness's parameters)."""

    budget_s: float
    warmup: int
    warmup_s: float
    min_repeats: int
    max_repeats: int


class ConvShape(TypedDict):
    """One convolution layer's shape."""

    batch: int
    in_channels: int
    out_channels: int
    height: int
    width: int
    kernel: int
    stride: int
    padding: int


@dataclass
class Plan:
    """A sweep's configurations to run (params per step call) and the ones skipped, with why."""

    kind: str
    groups: list[Group]
    configs: list[Config] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def add(self, group: str, params: Params, reason: str | None = None) -> None:
        """Add `params` to `group`, merging with an identical configuration already planned."""
        name = config_name(self.kind, params)
        for entry in [*self.configs, *self.skipped]:
            if entry.name == name:
                if group not in entry.groups:
                    entry.groups.append(group)
                return
        if reason:
            self.skipped.append(Skipped(name=name, params=params, groups=[group], reason=reason))
        else:
            self.configs.append(Config(name=name, params=params, groups=[group]))


def config_name(kind: str, p: Params) -> str:
    """A short unique name, e.g. `cudnn fp16 512/1024/128 L1 train`."""
    if kind == "lstm":
        sizes = f"{p.input_size}/{p.hidden_size}/{p.batch}"
        return f"{p.impl} {p.dtype} {sizes} T{p.seq_len} L{p.layers} {p.mode}"
    shape = f"{p.batch}x{p.in_channels}x{p.height}x{p.width}->{p.out_channels}"
    flags = f"bench={'on' if p.benchmark else 'off'} det={'on' if p.deterministic else 'off'}"
    return f"conv{p.kernel}x{p.kernel} {shape} {p.dtype} {p.memory_format} {flags} {p.mode}"


def _dtype_skip(kind: str, dtype: str, device: Device) -> str | None:
    """Why `dtype` cannot be measured meaningfully on this device (None when it can)."""
    if device.type != "cuda":
        cpu_reasons = {
            ("lstm", "tf32"): TF32_ON_CPU,
            ("conv", "tf32"): TF32_ON_CPU,
            ("lstm", "fp16"): HALF_LSTM_ON_CPU,
            ("lstm", "bf16"): HALF_LSTM_ON_CPU,
            ("conv", "fp16"): FP16_CONV_ON_CPU,
        }
        return cpu_reasons.get((kind, dtype))
    gpu_reasons = {
        "tf32": None if device.tensor_core_tf32 else NO_TF32_GPU,
        "bf16": None if device.bf16 else NO_BF16_GPU,
    }
    return gpu_reasons.get(dtype)


def _timing(device: Device, quick: bool) -> Timing:
    """Repeat budget per configuration: enough repeats for a stable median, within the budget."""
    cuda = device.type == "cuda"
    return {
        "budget_s": 0.15 if quick else 0.3,
        "warmup": 3 if cuda else 2,
        "warmup_s": 0.05 if cuda else 0.02,
        "min_repeats": 10,
        # a sample of a short kernel is a block of about 1 ms of calls (see the harness), so
        # 100 samples already hold thousands of calls and keep the full sweeps near 20 s each
        "max_repeats": 100 if cuda else 200,
    }


def lstm_sizes(device: Device, quick: bool) -> tuple[int, list[tuple[int, int, int]]]:
    """Sequence length and (input, hidden, batch) sizes: each aligned size then a misaligned twin.

    The GPU sizes repeat the H200 probe in research (512/512/64 vs 509/509/63 and
    512/1024/128 vs 511/1023/127); the CPU ones are small enough for two cores.
    """
    if device.type == "cuda":
        sizes = [(512, 512, 64), (509, 509, 63), (512, 1024, 128), (511, 1023, 127)]
        return 100, sizes[:2] if quick else sizes
    if quick:
        return 20, [(64, 64, 16), (61, 61, 15)]
    return 50, [(128, 128, 32), (125, 125, 31), (256, 256, 64), (253, 253, 63)]


def lstm_plan(device: Device, quick: bool = False) -> Plan:
    """The LSTM criteria sweep: precision x alignment, implementation, depth, forward-only."""
    cuda = device.type == "cuda"
    lib = "cudnn" if cuda else "native"
    where = "cuDNN" if cuda else "nn.LSTM on the CPU"
    seq_len, sizes = lstm_sizes(device, quick)
    groups = [
        Group(
            "precision", f"Precision and size alignment ({where}, 1 layer, training step)", "dtype"
        ),
        Group("forward", f"Forward only ({where}, 1 layer)", "dtype"),
        Group("impl", "cuDNN vs ATen native kernels vs a hand-written cell loop", "impl"),
        Group("layers", f"One layer vs several ({where}, training step)", "dtype"),
    ]
    plan = Plan("lstm", groups)
    timing = _timing(device, quick)

    def add(
        group: str,
        impl: str,
        dtype: str,
        size: tuple[int, int, int],
        *,
        layers: int = 1,
        mode: str = "train",
    ) -> None:
        i, h, b = size
        params = Params(
            impl=impl,
            dtype=dtype,
            input_size=i,
            hidden_size=h,
            batch=b,
            layers=layers,
            mode=mode,
            aligned=all(n % 8 == 0 for n in size),
            seq_len=seq_len,
            device=device.type,
            **timing,
        )
        reason = _dtype_skip("lstm", dtype, device)
        if impl == "cudnn" and not cuda:
            reason = CUDNN_ON_CPU
        plan.add(group, params, reason)

    dtypes = GPU_DTYPES
    for size, dtype in itertools.product(sizes, dtypes):
        add("precision", lib, dtype, size)
    # on the CPU the precision group already lists why the other dtypes are skipped
    for size, dtype in itertools.product(sizes[-2:], dtypes if cuda else ("fp32",)):
        add("forward", lib, dtype, size, mode="forward")
    impl_dtypes = ("tf32", "fp16") if cuda else ("fp32",)
    modes = ("train",) if quick and cuda else ("train", "forward")
    for impl, dtype, mode in itertools.product(
        ("cudnn", "native", "cell_loop"), impl_dtypes, modes
    ):
        add("impl", impl, dtype, sizes[0], mode=mode)
    for layers, dtype in itertools.product((1, 2) if quick else (1, 4), impl_dtypes):
        add("layers", lib, dtype, sizes[0], layers=layers)
    return plan


def conv_shapes(device: Device, quick: bool) -> list[ConvShape]:
    """Convolution shapes: ResNet-style 3x3 layers (early wide-image and late deep-channel)."""
    gpu = [(32, 64, 56), (32, 256, 14)]  # (batch, channels in and out, height and width)
    sizes = gpu if device.type == "cuda" else [(4, 32, 28), (4, 128, 14)]
    return [
        ConvShape(
            batch=batch,
            in_channels=channels,
            out_channels=channels,
            height=side,
            width=side,
            kernel=3,
            stride=1,
            padding=1,
        )
        for batch, channels, side in (sizes[:1] if quick else sizes)
    ]


def conv_plan(device: Device, quick: bool = False) -> Plan:
    """The convolution sweep: cudnn.benchmark x deterministic x dtype x memory format."""
    cuda = device.type == "cuda"
    groups: list[Group] = []
    plan = Plan("conv", groups)
    timing = _timing(device, quick)
    dtypes = GPU_DTYPES
    for shape in conv_shapes(device, quick):
        label = f"{shape['batch']}x{shape['in_channels']}x{shape['height']}x{shape['width']}"
        group = Group(
            f"conv-{label}",
            f"3x3 convolution {label} -> {shape['out_channels']} channels, training step",
            "memory_format",
        )
        groups.append(group)
        # benchmark=False first: PyTorch consults cuDNN's benchmark cache even when
        # benchmark is off, so an earlier autotuned run of the same shape would leak into it.
        flags = sorted(itertools.product((False, True), repeat=2))
        for (bench, det), dtype, fmt in itertools.product(
            flags, dtypes, ("contiguous", "channels_last")
        ):
            params = Params(
                **shape,
                dtype=dtype,
                memory_format=fmt,
                benchmark=bench,
                deterministic=det,
                mode="train",
                device=device.type,
                **timing,
            )
            reason = _dtype_skip("conv", dtype, device)
            if not cuda and (bench or det):
                if dtype != "fp32" or fmt != "contiguous":
                    continue  # one skip per switch setting says it all
                reason = CUDNN_SWITCH_ON_CPU
            plan.add(group.id, params, reason)
    return plan


def make_plan(kind: str, device: Device, quick: bool = False) -> Plan:
    """The plan for sweep `kind` ("lstm" or "conv") on the probed device."""
    return lstm_plan(device, quick) if kind == "lstm" else conv_plan(device, quick)


def _sizes(p: Params, *names: str) -> list[int]:
    """The named size fields of a configuration (an error naming the field if one is unset)."""
    values = [getattr(p, name) for name in names]
    for name, value in zip(names, values, strict=True):
        if not isinstance(value, int):
            raise ValueError(f"configuration has no {name}: {p}")
    return values


def lstm_work(p: Params) -> tuple[float, float]:
    """FLOPs of the gate matmuls (forward 8*H*(I+H)*T*B per layer; training 3x) and the fewest
    bytes (input, output and weights once; training adds the output gradient and weight
    gradients)."""
    input_size, hidden, batch, seq_len, layers = _sizes(
        p, "input_size", "hidden_size", "batch", "seq_len", "layers"
    )
    steps = seq_len * batch
    flops = 0.0
    weights = 0.0
    for layer in range(layers):
        inp = input_size if layer == 0 else hidden
        flops += 8 * hidden * (inp + hidden) * steps
        weights += 4 * hidden * (inp + hidden)
    activations = steps * (input_size + hidden)
    train = p.mode == "train"
    elements = activations + weights + ((steps * hidden + weights) if train else 0)
    return flops * (3 if train else 1), elements * ELEMENT_BYTES[p.dtype]


def conv_work(p: Params) -> tuple[float, float]:
    """FLOPs (2*N*K*C*R*S*Ho*Wo forward; training adds data and weight gradients, 3x) and the
    fewest bytes (input, weight, output once; training reads and writes each twice)."""
    batch, c_in, c_out, height, width, kernel, stride, padding = _sizes(
        p, "batch", "in_channels", "out_channels", "height", "width", "kernel", "stride", "padding"
    )
    side = [(n + 2 * padding - kernel) // stride + 1 for n in (height, width)]
    out = batch * c_out * side[0] * side[1]
    weight = c_out * c_in * kernel**2
    inp = batch * c_in * height * width
    flops = 2.0 * out * c_in * kernel**2
    factor = 3 if p.mode == "train" else 1
    elements = (inp + weight + out) * (2 if factor == 3 else 1)
    return flops * factor, float(elements * ELEMENT_BYTES[p.dtype])


def shares(kind: str, params: Params, median_ms: float, ceilings: Ceilings) -> dict[str, object]:
    """Achieved TFLOP/s and GB/s, each as a share of the measured ceiling; the larger one is
    the share of peak and names what bounds the configuration."""
    flops, nbytes = lstm_work(params) if kind == "lstm" else conv_work(params)
    seconds = median_ms / 1000.0
    tflops = flops / seconds / 1e12
    gbps = nbytes / seconds / 1e9
    peak_tflops = ceilings.matmul_tflops.get(params.dtype)
    peak_gbps = ceilings.copy_gbps
    compute = tflops / peak_tflops if peak_tflops else None
    memory = gbps / peak_gbps if peak_gbps else None
    known = [(v, k) for v, k in ((compute, "compute"), (memory, "memory")) if v is not None]
    best = max(known) if known else (None, None)
    return {
        "flops": flops,
        "bytes": nbytes,
        "achieved_tflops": tflops,
        "achieved_gbps": gbps,
        "share_of_compute_peak": compute,
        "share_of_bandwidth_peak": memory,
        "share_of_peak": best[0],
        "bound": best[1],
    }
