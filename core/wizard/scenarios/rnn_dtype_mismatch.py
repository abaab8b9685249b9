"""fp16 input into an fp32 LSTM (steps: rnn_dtype.py)."""

from __future__ import annotations

from core.wizard.model import Requirements, Scenario, Step

ORDER = 20

SCENARIO = Scenario(
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
