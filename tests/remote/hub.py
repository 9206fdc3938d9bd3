# SPDX-License-Identifier: ISC
"""hub.py: JupyterHub user servers as domains (tests/remote/hub.sh makes
the two users and the daemon, and sets HUB_CHP, HUB_USERS, HUB_HOMES).

Starts the hub (127.0.0.1, dummy authenticator, LocalProcessSpawner of
jupyterhub-singleuser on Jupyter Server 1.23, configurable-http-proxy
started and watched by the hub) with an admin service of our own, makes
each user a token with one scope (access:servers!user=NAME), and drives
the real worker through domains at /user/NAME/:

- a user whose server is not started is told so;
- create, save, edit, run, variables, complete, inspect, input() and
  send_input, upload and download, interrupt, restart;
- A's token at B's server is refused (403), B's notebooks unreachable;
- the proxy killed mid-run (the hub restarts it): the run completes, the
  kernel keeps its variables; killed mid-download: the download goes on
  where it was;
- the hub restarted mid-run: the same;
- token rotation: a new token for the same user, the old one revoked: the
  same notebook, its unsaved edits, saved with the new token;
- the user's server stopped mid-run (kernel_died once the window is
  over; the notebook's edits kept) and started again (the edits still
  there, restart_kernel starts a new kernel there).

usage: hub.py BUILDDIR STATEDIR RUNTIMECTL
"""
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "notebooks"))
from mcp import Worker  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rcheck import expect, ok  # noqa: E402

builddir, tmp, ctl = sys.argv[1:4]
began = time.time()
cfgdir = os.environ["RUNTIMED_CONFIG_DIR"]
UA, UB = os.environ["HUB_USERS"].split()
homes = os.environ["HUB_HOMES"]
hubdir = os.path.join(tmp, "hub")
os.makedirs(hubdir, exist_ok=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


PORT, API_PORT, CHP_PORT = free_port(), free_port(), free_port()
ADMIN = os.urandom(16).hex()
HUB = "http://127.0.0.1:%d" % PORT
with open(os.path.join(hubdir, "cfg.py"), "w") as f:
    f.write("""
c = get_config()
c.JupyterHub.ip = '127.0.0.1'
c.JupyterHub.port = %d
c.JupyterHub.hub_ip = '127.0.0.1'
c.JupyterHub.hub_port = %d
c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:%d'
c.ConfigurableHTTPProxy.command = [%r]
c.ConfigurableHTTPProxy.check_running_interval = 1
c.JupyterHub.authenticator_class = 'dummy'
c.JupyterHub.db_url = 'sqlite:///%s/hub.sqlite'
c.JupyterHub.cookie_secret_file = '%s/cookie_secret'
c.Authenticator.allowed_users = {%r, %r}
c.JupyterHub.services = [{'name': 'rtd-admin', 'api_token': %r}]
c.JupyterHub.load_roles = [{'name': 'rtd-admin', 'services': ['rtd-admin'],
    'scopes': ['admin:users', 'admin:servers', 'tokens']}]
c.Spawner.cmd = ['jupyterhub-singleuser']
c.Spawner.environment = {
    'JUPYTERHUB_SINGLEUSER_APP': 'jupyter_server.serverapp.ServerApp'}
c.Spawner.notebook_dir = '~'
c.Spawner.start_timeout = 60
c.Spawner.http_timeout = 60
c.JupyterHub.cleanup_servers = False
""" % (PORT, API_PORT, CHP_PORT, os.environ["HUB_CHP"], hubdir, hubdir, UA,
       UB, ADMIN))

hub = [None]


def start_hub():
    env = dict(os.environ)
    env["CONFIGPROXY_AUTH_TOKEN"] = ADMIN[:16] + "chp"
    log = open(os.path.join(hubdir, "hub.log"), "ab")
    hub[0] = subprocess.Popen(
        ["/usr/bin/python3", "-m", "jupyterhub", "-f",
         os.path.join(hubdir, "cfg.py")], cwd=hubdir, stdout=log,
        stderr=subprocess.STDOUT, env=env)
    t0 = time.time()
    while True:
        try:
            if api("GET", "/hub/api/")[0] == 200:
                return time.time() - t0
        except OSError:
            pass
        expect(hub[0].poll() is None, "the hub runs", None)
        expect(time.time() - t0 < 60, "the hub answers in 60 s", None)
        time.sleep(0.2)


def stop_hub():
    if hub[0] is not None and hub[0].poll() is None:
        hub[0].send_signal(signal.SIGTERM)
        try:
            hub[0].wait(20)
        except subprocess.TimeoutExpired:
            hub[0].kill()
            hub[0].wait()
    hub[0] = None


def api(method, path, body=None, token=ADMIN):
    req = urllib.request.Request(HUB + path, method=method,
                                 data=json.dumps(body).encode()
                                 if body is not None else None)
    req.add_header("Authorization", "token " + token)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            data = r.read()
            return r.status, json.loads(data) if data else None
    except urllib.error.HTTPError as e:
        data = e.read()
        try:
            return e.code, json.loads(data)
        except ValueError:
            return e.code, None


def server_ready(user):
    st, u = api("GET", "/hub/api/users/" + user)
    s = (u or {}).get("servers", {}).get("")
    return bool(s and s.get("ready"))


def start_server(user):
    t0 = time.time()
    st, _ = api("POST", "/hub/api/users/%s/server" % user)
    expect(st in (201, 202, 400), "start %s's server" % user, st)
    while not server_ready(user):
        expect(time.time() - t0 < 60, "%s's server ready in 60 s" % user,
               None)
        time.sleep(0.3)
    return time.time() - t0


def stop_server(user):
    st, _ = api("DELETE", "/hub/api/users/%s/server" % user)
    expect(st in (202, 204), "stop %s's server" % user, st)
    t0 = time.time()
    while server_ready(user) or api("GET", "/hub/api/users/" + user)[1][
            "servers"].get("", {}).get("pending"):
        expect(time.time() - t0 < 60, "%s's server stops" % user, None)
        time.sleep(0.3)


def new_token(user, note):
    st, t = api("POST", "/hub/api/users/%s/tokens" % user, {
        "scopes": ["access:servers!user=" + user], "note": note})
    expect(st == 201 and t["token"], "a token for " + user, t)
    return t


def write_token(name, token):
    path = os.path.join(cfgdir, name + ".token")
    fd = os.open(path + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, (token + "\n").encode())
    os.close(fd)
    os.rename(path + ".new", path)


def chp_pid():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if any(b"configurable-http-proxy" in c for c in cmd) and \
                str(CHP_PORT).encode() in b" ".join(cmd) and \
                os.getppid() != int(pid):
            return int(pid)
    return None


def ctl_domains():
    p = subprocess.run([ctl, "domains"], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def call(w, name, **args):
    sc, text, err = w.call(name, timeout=args.pop("timeout", 120), **args)
    return sc, text, err


def run_new(w, h, source):
    """Insert a cell at the bottom and run it to its end."""
    sc, _, err = call(w, "edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM", "source": source}])
    expect(not err, "insert a cell", sc)
    cid = sc["cells"][0]["cell_id"]
    sc, _, err = call(w, "run_cells", notebook_handle=h, cell_ids=[cid],
                      wait_secs=50)
    return cid, sc, err


try:
    t = start_hub()
    ok("the hub answers (%.1f s)" % t)
    ta, tb = new_token(UA, "rtd-a"), new_token(UB, "rtd-b")
    write_token("ha", ta["token"])
    write_token("hb", tb["token"])
    write_token("ab", ta["token"])
    with open(os.path.join(cfgdir, "domains.json"), "w") as f:
        json.dump({
            "ha": {"url": "%s/user/%s/" % (HUB, UA), "token_file": "ha.token"},
            "hb": {"url": "%s/user/%s/" % (HUB, UB), "token_file": "hb.token"},
            # A's token at B's server.
            "ab": {"url": "%s/user/%s/" % (HUB, UB),
                   "token_file": "ab.token"}}, f)

    # Not started: said so, with how to start it.
    rc, out = ctl_domains()
    expect(rc != 0 and "not running" in out and "is the base path" not in out and
           "/hub/api/users/%s/server" % UA in out,
           "runtimectl domains before the servers start", out)
    w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker-h.log"))
    sc, _, err = call(w, "create_notebook", path="a.ipynb", domain="ha")
    expect(err and "not running" in sc["error"]["message"],
           "a create before the server starts", sc)
    ok("a user whose server is not started is told so")

    ts = start_server(UA)
    start_server(UB)
    ok("the users' servers started by the hub (%.1f s)" % ts)
    rc, out = ctl_domains()
    expect(UA + "@127.0.0.1:%d/user/%s/" % (PORT, UA) in out,
           "the principal is the hub's user", out)

    # Create, then save without force (the creating PUT's 201).
    sc, _, err = call(w, "create_notebook", path="a.ipynb", domain="ha")
    expect(not err, "create on A's server", sc)
    h = sc["notebook_handle"]
    nid = sc["notebook_id"]
    c0, sc, err = run_new(w, h, "import os\nx = 41 + 1\n"
                          "print(os.getcwd(), x)")
    expect(not err and sc["status"] == "done" and "42" in json.dumps(sc) and
           os.path.join(homes, UA) in json.dumps(sc), "a run on A's server",
           sc)
    sc, _, err = call(w, "save_notebook", notebook_handle=h)
    expect(not err, "save after create, without force", sc)
    expect(os.path.exists(os.path.join(homes, UA, "a.ipynb")),
           "the notebook in A's home", None)
    ok("create_notebook, run, save_notebook on A's server (in %s's home)" % UA)

    # Introspection and stdin: what the local agent does.
    sc, _, err = call(w, "list_variables", notebook_handle=h)
    expect(not err and "x" in [v["name"] for v in sc["variables"]],
           "list_variables", sc)
    sc, _, err = call(w, "complete_code", notebook_handle=h, code="os.getc")
    expect(not err and any("getcwd" in m["text"] for m in sc["matches"]),
           "complete_code", sc)
    sc, _, err = call(w, "inspect_code", notebook_handle=h, code="os.getcwd")
    expect(not err and sc.get("found"), "inspect_code", sc)
    sc, _, err = call(w, "edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM",
         "source": "name = input('who? ')\nprint('hello', name)"}])
    ci = sc["cells"][0]["cell_id"]
    sc, _, err = call(w, "run_cells", notebook_handle=h, cell_ids=[ci],
                      wait_secs=20)
    expect(sc.get("status") == "input_required", "input() asks", sc)
    eid = sc["execution_id"]
    sc, _, err = call(w, "send_input", notebook_handle=h, execution_id=eid,
                      value="hub")
    expect(not err, "send_input", sc)
    sc, _, err = call(w, "get_results", notebook_handle=h, execution_id=eid,
                      timeout_secs=20)
    expect(sc.get("status") == "done" and "hello hub" in json.dumps(sc),
           "the answer reached input()", sc)
    ok("list_variables, complete_code, inspect_code, input() answered by "
       "send_input on the server's kernel")

    # Files, both ways.
    src = os.path.join(tmp, "up.bin")
    with open(src, "wb") as f:
        f.write(os.urandom(256 * 1024))
    sc, _, err = call(w, "upload_file", notebook_handle=h, host_path=src,
                      kernel_path="up.bin")
    expect(not err and sc["bytes"] == 256 * 1024, "upload", sc)
    sc, _, err = call(w, "download_file", notebook_handle=h,
                      kernel_path="up.bin", host_path=src + ".back")
    expect(not err and open(src, "rb").read() ==
           open(src + ".back", "rb").read(), "download", sc)
    ok("upload_file and download_file through the hub")

    # B's server with A's token: 403, nothing of B's reachable.
    sc, _, err = call(w, "create_notebook", path="b.ipynb", domain="ab")
    expect(err and "403" in sc["error"]["message"], "A's token at B's", sc)
    sc, _, err = call(w, "create_notebook", path="b.ipynb", domain="hb")
    expect(not err, "B's own token at B's server", sc)
    call(w, "disconnect_notebook", notebook_handle=sc["notebook_handle"])
    ok("each user confined to their own server (A's token at B's: 403)")

    long_src = ("import time\nfor i in range(8):\n    print(i, flush=True)\n"
                "    time.sleep(0.5)\nprint('end', x)")
    sc, _, err = call(w, "edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM", "source": long_src}])
    cl = sc["cells"][0]["cell_id"]

    def run_through(what, fault):
        sc, _, err = call(w, "run_cells", notebook_handle=h, cell_ids=[cl],
                          wait_secs=1)
        eid = sc["execution_id"]
        t0 = time.time()
        fault()
        sc, _, err = call(w, "get_results", notebook_handle=h,
                          execution_id=eid, timeout_secs=45)
        expect(sc.get("status") == "done" and "end 42" in json.dumps(sc),
               "the run across " + what, sc)
        return time.time() - t0

    # The proxy killed: the hub starts another, whose routes come back.
    def kill_proxy():
        pid = chp_pid()
        expect(pid is not None, "the proxy's pid", None)
        os.kill(pid, signal.SIGKILL)
        t0 = time.time()
        while chp_pid() in (None, pid):
            expect(time.time() - t0 < 20, "the hub restarts its proxy", None)
            time.sleep(0.1)
    dt = run_through("a proxy restart", kill_proxy)
    ok("configurable-http-proxy killed mid-run, restarted by the hub: the "
       "run completed (%.1f s), x kept" % dt)

    # The proxy killed mid-download: once the hub has it back, the
    # download goes on where it was (decision 092), not from zero.
    dl = os.path.join(tmp, "dl")
    os.mkdir(dl)

    def download_across(what, fault):
        big = os.path.join(homes, UA, "big.bin")
        data = os.urandom(256 << 20)
        with open(big, "wb") as f:
            f.write(data)
        os.chmod(big, 0o644)
        bwant = hashlib.sha256(data).hexdigest()
        del data
        back = os.path.join(dl, "big.bin")
        rid = w.next_id
        w.next_id += 1
        w.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                "params": {"name": "download_file", "arguments": {
                    "notebook_handle": h, "kernel_path": "big.bin",
                    "host_path": back}}})
        t0 = time.time()
        while True:
            # Its temporary, the only other file there.
            part = [n for n in os.listdir(dl) if n != "big.bin"]
            try:
                size = os.path.getsize(os.path.join(dl, part[0])) \
                    if part else 0
            except OSError:
                size = 0
            if size >= 16 << 20:
                at = size
                killed = time.time() - t0
                fault()
                break
            expect(not os.path.exists(back),
                   "the download ended before " + what, None)
            expect(time.time() - t0 < 60, "the download started", None)
            time.sleep(0.002)
        while True:
            msg = w.line(60)
            if msg.get("id") == rid:
                break
        sc = msg["result"].get("structuredContent", {})
        expect(not msg["result"].get("isError") and
               sc.get("sha256") == bwant and sc.get("resumed", 0) >= 1 and
               not sc.get("restarted"), "the download across " + what, sc)
        expect(os.listdir(dl) == ["big.bin"], "no temporary left",
               os.listdir(dl))
        with open(back, "rb") as f:
            got = hashlib.sha256()
            for b in iter(lambda: f.read(1 << 20), b""):
                got.update(b)
        expect(got.hexdigest() == bwant, "the file downloaded", None)
        os.unlink(big)
        os.unlink(back)
        return killed, at, sc["resumed"], time.time() - t0
    ok("configurable-http-proxy killed %.1f s into a 256 MiB download "
       "(%d bytes here), restarted by the hub: resumed %d time(s), the "
       "whole in %.1f s, sha256 both ends" % download_across(
           "a proxy restart", kill_proxy))

    # And mid-upload: the chunk cut is sent again, or the next one, as
    # the temporary's size there says.
    up = os.path.join(dl, "up64.bin")
    data = os.urandom(64 << 20)
    with open(up, "wb") as f:
        f.write(data)
    uwant = hashlib.sha256(data).hexdigest()
    del data
    rid = w.next_id
    w.next_id += 1
    w.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
        "name": "upload_file", "arguments": {
            "notebook_handle": h, "kernel_path": "up64.bin",
            "host_path": up}}})
    t0 = time.time()
    home = os.path.join(homes, UA)
    while True:
        part = [n for n in os.listdir(home) if n.startswith("rtd-")]
        try:
            size = os.path.getsize(os.path.join(home, part[0])) if part \
                else 0
        except OSError:
            size = 0
        if size >= 8 << 20:
            at = size
            killed = time.time() - t0
            kill_proxy()
            break
        expect(not os.path.exists(os.path.join(home, "up64.bin")),
               "the upload ended before the proxy was killed", None)
        expect(time.time() - t0 < 60, "the upload started", None)
        time.sleep(0.002)
    while True:
        msg = w.line(120)
        if msg.get("id") == rid:
            break
    sc = msg["result"].get("structuredContent", {})
    expect(not msg["result"].get("isError") and sc.get("sha256") == uwant and
           sc.get("resumed", 0) >= 1, "the upload across a proxy restart", sc)
    with open(os.path.join(home, "up64.bin"), "rb") as f:
        got = hashlib.sha256()
        for b in iter(lambda: f.read(1 << 20), b""):
            got.update(b)
    expect(got.hexdigest() == uwant, "the file uploaded", None)
    expect(not [n for n in os.listdir(home) if n.startswith("rtd-")],
           "no temporary left there", os.listdir(home))
    os.unlink(up)
    ok("configurable-http-proxy killed %.1f s into a 64 MiB upload (%d "
       "bytes there), restarted by the hub: resumed %d time(s), the whole "
       "in %.1f s, sha256 both ends" % (
           killed, at, sc["resumed"], time.time() - t0))

    def restart_hub():
        stop_hub()
        start_hub()
    dt = run_through("a hub restart", restart_hub)
    ok("the hub restarted mid-run: the run completed (%.1f s)" % dt)
    ok("the hub restarted %.1f s into a 256 MiB download (%d bytes here, "
       "its proxy with it): resumed %d time(s), the whole in %.1f s, "
       "sha256 both ends" % download_across("a hub restart", restart_hub))

    # Token rotation: a new token, the old one revoked; the same notebook.
    sc, _, err = call(w, "edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM", "source": "# after rotation"}])
    t2 = new_token(UA, "rtd-a2")
    write_token("ha", t2["token"])
    st, _ = api("DELETE", "/hub/api/users/%s/tokens/%s" % (UA, ta["id"]))
    expect(st == 204, "the old token revoked", st)
    sc, _, err = call(w, "save_notebook", notebook_handle=h)
    expect(not err, "save with the new token", sc)
    w2 = Worker(builddir, dict(os.environ),
                os.path.join(tmp, "worker-h2.log"))
    sc, _, err = call(w2, "connect_notebook", path="a.ipynb", domain="ha")
    expect(not err and sc["notebook_id"] == nid, "the same notebook", sc)
    st, toks = api("GET", "/hub/api/users/%s/tokens" % UA)
    used = [t for t in toks["api_tokens"] if t["id"] == t2["id"]]
    expect(used and used[0]["last_activity"], "the new token was used", toks)
    w2.close()
    ok("token rotation: the new token saves, the same notebook_id joins")

    # The server stopped mid-run: kernel_died once the window is over;
    # the edits stay; started again, a connect joins them.
    sc, _, err = call(w, "edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM", "source": "# unsaved"}])
    sc, _, err = call(w, "run_cells", notebook_handle=h, cell_ids=[cl],
                      wait_secs=1)
    eid = sc["execution_id"]
    stop_server(UA)
    rc, out = ctl_domains()
    expect("not running" in out, "domains: A's server not running", out)
    sc, _, err = call(w, "get_results", notebook_handle=h, execution_id=eid,
                      timeout_secs=45)
    expect(sc.get("status") == "kernel_died", "the run on a stopped server",
           sc)
    start_server(UA)
    sc, _, err = call(w, "inspect_notebook", notebook_handle=h)
    if err:
        call(w, "disconnect_notebook", notebook_handle=h)
        sc, _, err = call(w, "connect_notebook", path="a.ipynb", domain="ha")
        expect(not err, "connect once the server is back", sc)
        h = sc["notebook_handle"]
        sc, _, err = call(w, "inspect_notebook", notebook_handle=h)
    expect(not err and sc["notebook_id"] == nid and sc["dirty"],
           "the edits kept across the server's stop", sc)
    # Its kernel died with the server: as a local one, a restart.
    cid, sc, err = run_new(w, h, "print(6 * 7)")
    expect(err and sc["error"]["code"] == "kernel_unavailable" and
           "restart_kernel" in sc["error"]["message"],
           "a run while the kernel is dead", sc)
    sc, _, err = call(w, "restart_kernel", notebook_handle=h)
    expect(not err, "restart_kernel once the server is back", sc)
    sc, _, err = call(w, "run_cells", notebook_handle=h, cell_ids=[cid],
                      wait_secs=50)
    expect(not err and sc["status"] == "done" and "42" in json.dumps(sc),
           "a run once the server is back (a new kernel)", sc)
    ok("the user's server stopped mid-run (kernel_died), started again: "
       "the edits kept, a new kernel runs")

    sc, _, err = call(w, "list_notebooks")
    mine = [n for n in sc["notebooks"] if n["notebook_id"] == nid]
    expect(mine and mine[0]["domain"] == "ha", "list_notebooks' domain", sc)
    w.close()
    for u in (UA, UB):
        api("DELETE", "/hub/api/users/%s/server" % u)
    ok("hub.py took %.0f s" % (time.time() - began))
finally:
    stop_hub()
print("done")
