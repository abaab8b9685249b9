"""One operation per user action, called by both surfaces: the CLI parses and prints, the app
presents (launching through gui/tasks.py); neither repeats a workflow.

Each operation takes what the user chose, does the whole action (opening the KB only when it is
needed, running children through the packages below), saves its result through `core.ops.save`
(the one place that writes the user database) and returns the typed result:

    diagnose(text, kb)              -> Diagnosis            core/ops/diagnose.py   (match)
    try_original / try_fixes        -> TryResult            core/ops/tryrun.py     (try)
    fleet_collect / fleet_open      -> FleetRun             core/ops/fleet.py      (fleet)

Modules are imported by name (`from core.ops.diagnose import diagnose`) so a command pays only
for its own operation.
"""
