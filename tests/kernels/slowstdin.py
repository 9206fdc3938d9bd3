# SPDX-License-Identifier: ISC
"""slowstdin.py: a real ipykernel whose stdin port accepts connections
only after DELAY seconds (tests/kernels/slowstdin.sh).  The kernel binds
stdin on a port of its own; this launcher listens on the port the
connection file names once the delay is over and relays each
connection to the kernel's.  Until then the client's stdin socket cannot
connect, as happens for a moment when a loaded machine starts a kernel:
the kernel's stdin ROUTER drops an input_request to a client it has not
yet seen.  Usage: slowstdin.py DELAY CONNECTION_FILE
"""
import json
import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from relay import pump  # noqa: E402

delay = float(sys.argv[1])
with open(sys.argv[2]) as f:
    conn = json.load(f)
public = conn["stdin_port"]
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
conn["stdin_port"] = probe.getsockname()[1]
probe.close()
fd, private = tempfile.mkstemp(suffix=".json")
with os.fdopen(fd, "w") as f:
    json.dump(conn, f)



def relay():
    time.sleep(delay)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", public))
    ls.listen(8)
    while True:
        c, _ = ls.accept()
        k = socket.create_connection(("127.0.0.1", conn["stdin_port"]))
        for a, b in ((c, k), (k, c)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


threading.Thread(target=relay, daemon=True).start()
from ipykernel.kernelapp import IPKernelApp  # noqa: E402
IPKernelApp.launch_instance(argv=["-f", private])
