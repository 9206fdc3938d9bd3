# SPDX-License-Identifier: ISC
"""remote-rtt.py: `1+1` on a Jupyter Server's kernel through runtimed (the
real worker, daemon and runtimed-agent-remote: run_cells to the result)
against a raw WebSocket client on the same server (tornado's: an
execute_request on the kernel's channels, timed to its execute_reply
and the idle that ends it), in alternating rounds; prints the medians
and their ratio (issue 38's goal: at most 1.10).  A third series is the
raw client asking for quick ACKs after each read, as runtimed-agent-remote
does (a Jupyter Server does not set TCP_NODELAY, so a delayed ACK stalls
its next frame 40 ms): that ratio is runtimed's own cost.

Run it with a server of your own (tests/remote/lib.sh starts one):
    python3 bench/remote-rtt.py BUILDDIR URL TOKEN [ROUNDS]
with RUNTIMED_CONFIG_DIR, RUNTIMED_STATE_DIR and RUNTIMED_SOCKET set to a
private daemon's world (the config dir gets a domain "rtt").
"""
import asyncio
import json
import socket
import os
import statistics
import sys
import time
import uuid

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "notebooks"))
from mcp import Worker  # noqa: E402

import nbformat  # noqa: E402
from tornado.httpclient import AsyncHTTPClient, HTTPRequest  # noqa: E402
from tornado.websocket import websocket_connect  # noqa: E402

builddir, url, token = sys.argv[1:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 30
url = url.rstrip("/") + "/"
cfg = os.environ["RUNTIMED_CONFIG_DIR"]
tf = os.path.join(cfg, "rtt.token")
fd = os.open(tf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, (token + "\n").encode())
os.close(fd)
dj = os.path.join(cfg, "domains.json")
domains = json.load(open(dj)) if os.path.exists(dj) else {}
domains["rtt"] = {"url": url, "token_file": "rtt.token"}
json.dump(domains, open(dj, "w"))


async def raw_client():
    http = AsyncHTTPClient()
    hdr = {"Authorization": "token " + token}
    r = await http.fetch(HTTPRequest(url + "api/kernels", method="POST",
                                     headers=hdr, body=json.dumps(
                                         {"name": "python3"})))
    kid = json.loads(r.body)["id"]
    ws = await websocket_connect(HTTPRequest(
        url.replace("http", "ws", 1) + "api/kernels/%s/channels" % kid,
        headers=hdr))
    session = uuid.uuid4().hex

    def quickack():
        sock = ws.protocol.stream.socket
        if sock is not None and hasattr(socket, "TCP_QUICKACK"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)

    async def execute(code, quick=False):
        mid = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": mid, "session": session, "username": "",
                       "msg_type": "execute_request", "version": "5.3",
                       "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True,
                        "user_expressions": {}, "allow_stdin": False,
                        "stop_on_error": True}, "buffers": []}))
        replied = idle = False
        result = None
        while not (replied and idle):
            m = json.loads(await ws.read_message())
            if quick:
                quickack()
            if m.get("parent_header", {}).get("msg_id") != mid:
                continue
            if m["msg_type"] == "execute_reply":
                replied = True
            elif m["msg_type"] == "execute_result":
                result = m["content"]["data"]["text/plain"]
            elif m["msg_type"] == "status" and \
                    m["content"]["execution_state"] == "idle":
                idle = True
        return result
    # Wait for the kernel.
    for _ in range(100):
        try:
            if await asyncio.wait_for(execute("0"), 2) == "0":
                break
        except asyncio.TimeoutError:
            pass
    return execute, kid


async def main():
    execute, kid = await raw_client()
    nbpath = "rtt-%d.ipynb" % os.getpid()
    w = Worker(builddir, dict(os.environ), "/dev/null")
    sc, _, err = w.call("create_notebook", path=nbpath, domain="rtt")
    assert not err, sc
    h = sc["notebook_handle"]
    sc, _, err = w.call("edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "TOP", "source": "1+1"}])
    cid = sc["cells"][0]["cell_id"]
    sc, _, err = w.call("run_cells", notebook_handle=h, cell_ids=[cid],
                        wait_secs=50, timeout=120)
    assert sc["status"] == "done", sc
    ours, raw, quick = [], [], []
    for i in range(rounds):
        for which in ((0, 1, 2) if i % 2 == 0 else (2, 1, 0)):
            t0 = time.perf_counter()
            if which == 0:
                sc, _, err = w.call("run_cells", notebook_handle=h,
                                    cell_ids=[cid], wait_secs=30)
                assert sc["status"] == "done", sc
                ours.append(time.perf_counter() - t0)
            elif which == 1:
                assert await execute("1+1") == "2"
                raw.append(time.perf_counter() - t0)
            else:
                assert await execute("1+1", True) == "2"
                quick.append(time.perf_counter() - t0)
    w.call("disconnect_notebook", notebook_handle=h)
    w.close()
    def p90(xs):
        return sorted(xs)[int(rounds * 0.9) - 1] * 1e3
    mo, mr, mq = (statistics.median(x) for x in (ours, raw, quick))
    print("1+1 on %s, %d alternating rounds: runtimed %.1f ms "
          "(p90 %.1f), raw WebSocket client %.1f ms (p90 %.1f): %.2fx; "
          "raw client with quick ACKs %.1f ms (p90 %.1f): %.2fx" % (
              url, rounds, mo * 1e3, p90(ours), mr * 1e3, p90(raw),
              mo / mr, mq * 1e3, p90(quick), mo / mq))
    await AsyncHTTPClient().fetch(HTTPRequest(
        url + "api/kernels/" + kid, method="DELETE",
        headers={"Authorization": "token " + token}))


asyncio.run(main())
