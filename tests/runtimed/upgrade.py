#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""upgrade.py: older notebooks (nbformat 1-3) through the real daemon.

usage: upgrade.py WORKER CORPUS-DIR

For each CORPUS-DIR/*.ipynb: open it with connect_notebook on the real
runtimed-mcp-worker (which starts the real runtimed), check the file is
untouched by the open, save it, and compare the saved bytes with what
nbformat.write(nbformat.read(f, as_version=4)) writes, cell ids
normalised (both mint random ids).  The saved file must be nbformat 4.5
with unique ids and validate with nbformat whenever nbformat's own
upgrade does.  For each CORPUS-DIR/refused/*.ipynb, which nbformat
cannot read either: connect_notebook fails with notebook_unavailable,
the message names what is wrong, and the file is untouched.
"""
import glob
import io
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import warnings

import nbformat

WORKER, CORPUS = sys.argv[1], sys.argv[2]
# What each refusal must mention.
REFUSED = {
    "nbformat-test3_no_metadata.ipynb": "metadata",
    "nbformat-test3_no_min_version.ipynb": "nbformat_minor",
    "nbformat-test3_no_worksheets.ipynb": "worksheets",
    "nbformat-test3_worksheet_with_no_cells.ipynb": "cells",
    "v5.ipynb": "nbformat 5",
}
ID = re.compile(r'^   "id": "[^"]*",$', re.M)
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


class Worker:
    def __init__(self, tmp):
        env = dict(os.environ)
        env["RUNTIMED_SOCKET"] = os.path.join(tmp, "run", "runtimed.sock")
        env["RUNTIMED_STATE_DIR"] = os.path.join(tmp, "state")
        os.mkdir(os.path.join(tmp, "run"), 0o700)
        self.env = env
        self.err = open(os.path.join(tmp, "worker.err"), "w")
        self.p = subprocess.Popen([WORKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err,
                                  env=env)
        self.n = 0
        self.buf = b""
        self.rpc("initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": {"experimental": {"io.runtimed/structured": {}}},
                                "clientInfo": {"name": "upgrade",
                                               "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def line(self, timeout):
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], timeout)
            if not r:
                raise TimeoutError("no reply from the worker")
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("the worker closed its stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def rpc(self, method, params, timeout=60):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method,
                   "params": params})
        while True:
            r = self.line(timeout)
            if r.get("id") == self.n:
                return r

    def tool(self, name, **args):
        r = self.rpc("tools/call", {"name": name, "arguments": args})
        return r["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)
        subprocess.run([os.path.join(os.path.dirname(WORKER), "runtimed",
                                     "runtimed"), "stop"], env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def expected(path):
    """What nbformat writes for path, and whether that validates."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nb = nbformat.read(path, as_version=4)
        out = io.StringIO()
        nbformat.write(nb, out)
    text = out.getvalue()
    try:
        nbformat.validate(nbformat.reads(text, as_version=4))
        valid = True
    except nbformat.ValidationError:
        valid = False
    return text, valid


def main():
    tmp = tempfile.mkdtemp(prefix="rtd-upgrade-")
    w = Worker(tmp)
    try:
        for src in sorted(glob.glob(os.path.join(CORPUS, "*.ipynb"))):
            name = os.path.basename(src)
            want, valid = expected(src)
            path = os.path.join(tmp, name)
            shutil.copyfile(src, path)
            with open(path, "rb") as f:
                orig = f.read()
            r = w.tool("connect_notebook", path=path)
            if r.get("isError"):
                check(False, "%s: connect: %s" % (name,
                      json.dumps(r.get("structuredContent"))[:400]))
                continue
            h = r["structuredContent"]["notebook_handle"]
            with open(path, "rb") as f:
                check(f.read() == orig, "%s: opening leaves the file as "
                      "it is" % name)
            r = w.tool("save_notebook", notebook_handle=h)
            check(not r.get("isError"), "%s: save" % name)
            w.tool("disconnect_notebook", notebook_handle=h)
            with open(path, encoding="utf-8") as f:
                got = f.read()
            same = ID.sub('   "id": "ID",', got) == \
                ID.sub('   "id": "ID",', want)
            if not same:
                open(os.path.join(tmp, name + ".want"), "w").write(want)
                subprocess.run(["diff", "-u", os.path.join(tmp, name +
                                ".want"), path])
            check(same, "%s: saved bytes equal nbformat's upgrade, ids "
                  "aside" % name)
            nb = json.loads(got)
            ids = [c.get("id") for c in nb["cells"]]
            check(nb["nbformat"] == 4 and nb["nbformat_minor"] == 5 and
                  all(ids) and len(set(ids)) == len(ids),
                  "%s: saved as 4.5 with unique ids" % name)
            if valid:
                try:
                    nbformat.validate(nbformat.reads(got, as_version=4))
                    ok = True
                except nbformat.ValidationError as e:
                    print(e)
                    ok = False
                check(ok, "%s: the saved file validates" % name)
            else:
                print("note  %s: nbformat's own upgrade does not "
                      "validate; bytes compared only" % name)
        for src in sorted(glob.glob(os.path.join(CORPUS, "refused",
                                                 "*.ipynb"))):
            name = os.path.basename(src)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nbformat.read(src, as_version=4)
                check(False, "%s: nbformat refuses it too" % name)
            except Exception:
                pass
            path = os.path.join(tmp, name)
            shutil.copyfile(src, path)
            with open(path, "rb") as f:
                orig = f.read()
            r = w.tool("connect_notebook", path=path)
            err = (r.get("structuredContent") or {}).get("error") or {}
            msg = err.get("message", "")
            why = msg[len(path) + 2:] if msg.startswith(path + ": ") else msg
            check(r.get("isError") and
                  err.get("code") == "notebook_unavailable" and
                  REFUSED.get(name, "?") in why,
                  "%s: refused: %s" % (name, msg))
            with open(path, "rb") as f:
                check(f.read() == orig, "%s: the file is untouched" % name)
    finally:
        w.close()
        if failures:
            with open(os.path.join(tmp, "worker.err")) as f:
                sys.stderr.write(f.read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)


main()
