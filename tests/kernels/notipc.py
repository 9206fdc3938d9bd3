# SPDX-License-Identifier: ISC
"""notipc.py: a real ipykernel behind a launcher that does not do ipc as
jupyter_client does (tests/kernels/ipcfallback.sh).  Given a tcp
connection file it runs ipykernel; given an ipc one it
  tcponly: exits, as a kernel written for tcp alone;
  colon:   binds its five sockets at {ip}:{port} (another reading of the
           ipc convention) and answers nothing;
  silent:  binds nothing and answers nothing.
Usage: notipc.py MODE CONNECTION_FILE
"""
import json
import os
import socket
import sys
import time

mode, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    conn = json.load(f)
if conn["transport"] == "tcp":
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher",
                              "-f", path])
if mode == "tcponly":
    sys.exit("notipc: transport %s: only tcp is known here" %
             conn["transport"])
socks = []
if mode == "colon":
    for name in ("shell", "iopub", "stdin", "control", "hb"):
        s = socket.socket(socket.AF_UNIX)
        s.bind("%s:%d" % (conn["ip"], conn[name + "_port"]))
        s.listen(1)
        socks.append(s)
time.sleep(600)
