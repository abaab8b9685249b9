"""One operation per user action, called by both surfaces: the CLI parses and prints, the app
presents (launching through gui/tasks.py); neither repeats a workflow.

Each operation takes what the user chose, does the whole action (opening the KB only when it is
needed, running children through the packages below), saves its result through `core.ops.save`
(the one place that writes the user database) and returns the typed result:

    check_env / open_saved_env      -> Environment          core/ops/env.py        (env)
    diagnose(text, kb)              -> Diagnosis            core/ops/diagnose.py   (match)
    try_original / try_fixes        -> TryResult            core/ops/tryrun.py     (try; the
    try_command (both, the CLI)                                                     app: 2 phases;
    save_try(result)                -> busy error or None   core/ops/save.py        both save)
    wizard(scenario_id)             -> WizardRun            core/ops/wizard.py     (wizard run)
    bench(kind)                     -> Sweep                core/ops/bench.py      (bench)
    build(...)                      -> report model         core/ops/report.py     (report)
    fleet(...) / open_section(path) -> FleetRun / section   core/ops/fleet.py      (fleet)
    nccl(NcclRequest)               -> NcclReport           core/ops/nccl.py       (nccl)

Modules are imported by name (`from core.ops.diagnose import diagnose`) so a command pays only
for its own operation.
"""
