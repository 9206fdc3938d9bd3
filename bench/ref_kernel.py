#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""The references of bench/run.mjs: the same workloads through Debian's
jupyter_client (BlockingKernelClient) and a raw pyzmq client that does
only what the wire protocol requires, on one python3 kernel.

A server on stdin/stdout, so run.mjs can alternate a batch of these with
a batch through runtimed: it prints {"cold_start_ms": ...} once the
kernel is ready, then answers each request line
{"client": "raw"|"jc", "code": CODE, "n": N} with {"samples": [ms, ...]}.
Each answer also carries "kernel_cpu_ms": the CPU time the kernel
process used during the batch, from its threads' /proc schedstat.  A raw
request may name another kernel, "connect": CONNECTION_FILE and "pid":
its PID (runtimed's own kernel, so that both sides run on one kernel).
An empty line or end of input shuts the kernel down.

usage: ref_kernel.py
"""
import hashlib
import hmac
import json
import os
import sys
import time
import uuid
from datetime import datetime, timezone

import zmq
from jupyter_client.manager import KernelManager

os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")

def run_blocking(kc, code):
    """execute through BlockingKernelClient until reply and idle."""
    t0 = time.perf_counter()
    msg_id = kc.execute(code)
    idle = reply = False
    while not (idle and reply):
        if not idle:
            m = kc.get_iopub_msg(timeout=60)
            if (m["parent_header"].get("msg_id") == msg_id and
                    m["msg_type"] == "status" and
                    m["content"]["execution_state"] == "idle"):
                idle = True
        if not reply:
            r = kc.get_shell_msg(timeout=60)
            if r["parent_header"].get("msg_id") == msg_id:
                reply = True
    return time.perf_counter() - t0


class Raw:
    """The least a client can do: sign, send, read to reply + idle."""

    def __init__(self, info):
        key = info["key"]
        self.key = key if isinstance(key, bytes) else key.encode()
        self.session = uuid.uuid4().hex
        ctx = zmq.Context.instance()
        url = lambda port: (f"ipc://{info['ip']}-{port}"
                            if info["transport"] == "ipc"
                            else f"tcp://{info['ip']}:{port}")
        self.shell = ctx.socket(zmq.DEALER)
        self.shell.connect(url(info["shell_port"]))
        self.iopub = ctx.socket(zmq.SUB)
        self.iopub.setsockopt(zmq.SUBSCRIBE, b"")
        self.iopub.connect(url(info["iopub_port"]))
        time.sleep(0.3)

    def sign(self, parts):
        h = hmac.new(self.key, digestmod=hashlib.sha256)
        for p in parts:
            h.update(p)
        return h.hexdigest().encode()

    def execute(self, code):
        msg_id = uuid.uuid4().hex
        header = json.dumps({
            "msg_id": msg_id, "msg_type": "execute_request",
            "username": "bench", "session": self.session,
            "date": datetime.now(timezone.utc).isoformat(),
            "version": "5.3"}).encode()
        content = json.dumps({
            "code": code, "silent": False, "store_history": True,
            "user_expressions": {}, "allow_stdin": False,
            "stop_on_error": True}).encode()
        parts = [header, b"{}", b"{}", content]
        # On a kernel shared with runtimed, its runs' messages wait here:
        # read them before the clock starts.
        for sock in (self.shell, self.iopub):
            while sock.poll(0):
                sock.recv_multipart()
        t0 = time.perf_counter()
        self.shell.send_multipart([b"<IDS|MSG>", self.sign(parts)] + parts)
        idle = reply = False
        poller = zmq.Poller()
        poller.register(self.shell, zmq.POLLIN)
        poller.register(self.iopub, zmq.POLLIN)
        while not (idle and reply):
            for sock, _ in poller.poll(60000):
                frames = sock.recv_multipart()
                i = frames.index(b"<IDS|MSG>")
                hdr = json.loads(frames[i + 2])
                parent = json.loads(frames[i + 3])
                if parent.get("msg_id") != msg_id:
                    continue
                if sock is self.shell:
                    reply = True
                elif hdr["msg_type"] == "status":
                    st = json.loads(frames[i + 5])["execution_state"]
                    idle = idle or st == "idle"
        return time.perf_counter() - t0


def kernel_cpu_ms(pid):
    """pid's time on a CPU in ms, every thread's, from /proc schedstat
    (nanoseconds; /proc/PID/stat's ticks are too coarse for 1+1)."""
    t = 0
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                t += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended
    return t / 1e6


def main():
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    cold_start = time.perf_counter() - t0
    raw = Raw(km.get_connection_info(session=False))
    others = {}
    print(json.dumps({"cold_start_ms": round(cold_start * 1000, 1)}),
          flush=True)
    try:
        for line in sys.stdin:
            if not line.strip():
                break
            req = json.loads(line)
            pid = km.provisioner.pid
            if req.get("connect"):
                if req["connect"] not in others:
                    with open(req["connect"]) as f:
                        others[req["connect"]] = Raw(json.load(f))
                run = others[req["connect"]].execute
                pid = req["pid"]
            elif req["client"] == "raw":
                run = raw.execute
            else:
                run = lambda code: run_blocking(kc, code)
            cpu = kernel_cpu_ms(pid)
            samples = [run(req["code"]) * 1000 for _ in range(req["n"])]
            cpu = kernel_cpu_ms(pid) - cpu
            print(json.dumps({"samples": samples, "kernel_cpu_ms": cpu}),
                  flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
