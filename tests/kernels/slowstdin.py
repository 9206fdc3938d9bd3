# SPDX-License-Identifier: ISC
"""slowstdin.py: a real ipykernel whose stdin endpoint accepts
connections only after DELAY seconds (tests/kernels/slowstdin.sh).  The
kernel binds its sockets elsewhere; this launcher listens on the
endpoints the connection file names and relays each connection to the
kernel's, at once for shell, control, iopub and heartbeat, and for stdin
once the delay is over.  Until then the client's stdin socket cannot
connect, as happens for a moment when a loaded machine starts a kernel:
the kernel's stdin ROUTER drops an input_request to a client it has not
yet seen.  On tcp only stdin needs the relay; on ipc (the agent's
default, decision 060) the kernel's own sockets are in a directory of
this launcher's.  With "tcp" it exits on an ipc connection file, and
the agent starts it again on tcp.
Usage: slowstdin.py DELAY ipc|tcp CONNECTION_FILE
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
with open(sys.argv[3]) as f:
    conn = json.load(f)
if conn["transport"] != sys.argv[2]:
    sys.exit("slowstdin: %s wanted, not %s" % (sys.argv[2], conn["transport"]))
names = ("shell", "control", "stdin", "iopub", "hb")
ipc = conn["transport"] == "ipc"
if ipc:
    # Same port numbers, another directory (short: a sun_path).
    public = {n: "%s-%d" % (conn["ip"], conn[n + "_port"]) for n in names}
    conn["ip"] = os.path.join(tempfile.mkdtemp(prefix="ss"), "k")
    private = {n: "%s-%d" % (conn["ip"], conn[n + "_port"]) for n in names}
    relayed = names
else:
    public = {"stdin": ("127.0.0.1", conn["stdin_port"])}
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    conn["stdin_port"] = probe.getsockname()[1]
    probe.close()
    private = {"stdin": ("127.0.0.1", conn["stdin_port"])}
    relayed = ("stdin",)
family = socket.AF_UNIX if ipc else socket.AF_INET
fd, path = tempfile.mkstemp(suffix=".json")
with os.fdopen(fd, "w") as f:
    json.dump(conn, f)


def relay(name):
    if name == "stdin":
        time.sleep(delay)
    ls = socket.socket(family)
    if not ipc:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(public[name])
    ls.listen(8)
    while True:
        c, _ = ls.accept()
        try:
            k = socket.socket(family)
            k.connect(private[name])
        except OSError:
            c.close()       # the kernel has not bound it yet
            continue
        for a, b in ((c, k), (k, c)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


for n in relayed:
    threading.Thread(target=relay, args=(n,), daemon=True).start()
from ipykernel.kernelapp import IPKernelApp  # noqa: E402
IPKernelApp.launch_instance(argv=["-f", path])
