"""A script that never finishes (a deadlocked data loader, say), and starts a helper process that
detaches into its own session: `try` must stop both at its timeout."""

import subprocess
import sys
import time

helper = subprocess.Popen(
    [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"], start_new_session=True
)
print(f"helper {helper.pid}", flush=True)
print("waiting for the data loader...", flush=True)
while True:
    time.sleep(1)
