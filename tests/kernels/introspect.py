#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""introspect.py: list_variables, complete_code, inspect_code and
send_input through the real worker, daemon, agent and kernels
(docs/decisions/022).  Run by introspect.sh, which starts the daemon.
Usage: introspect.py BUILDDIR SRCDIR TMPDIR
"""
import json
import os
import subprocess
import sys
import time

BUILD, SRC, TMP = sys.argv[1:4]
sys.path.insert(0, os.path.join(SRC, "tests", "notebooks"))
from mcp import Worker  # noqa: E402

ENV = dict(os.environ)
PASSWORD = "s3cr3t-PW-q7Zx"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def ok(msg):
    print("ok: " + msg)


def call(w, name, **args):
    sc, text, err = w.call(name, **args)
    if err:
        fail("%s %s: %s" % (name, args, json.dumps(sc)))
    return sc, text


def call_err(w, name, **args):
    sc, text, err = w.call(name, **args)
    if not err:
        fail("%s %s did not fail: %s" % (name, args, json.dumps(sc)))
    return sc["error"]


def add_cell(w, h, source):
    sc, _ = call(w, "edit_cells", notebook_handle=h, edits=[
        {"op": "insert", "after": "BOTTOM", "source": source}])
    return sc["cells"][0]["cell_id"]


def run(w, h, source, wait):
    cid = add_cell(w, h, source)
    t0 = time.monotonic()
    sc, text = call(w, "run_cells", notebook_handle=h, cell_ids=[cid],
                    wait_secs=wait)
    return cid, sc, text, time.monotonic() - t0


def count(w, h):
    sc, _ = call(w, "get_kernel_info", notebook_handle=h)
    return sc["execution_count"]


def python_part(w):
    nb = os.path.join(TMP, "py.ipynb")
    sc, _ = call(w, "create_notebook", path=nb, kernel="python3")
    h = sc["notebook_handle"]
    _, sc, _, _ = run(w, h, "big = list(range(10**7))\ns = 'x' * 10**6\n"
                      "n = 42\nimport os\n_hidden = 1", 30)
    if sc["status"] != "done":
        fail("setup cell: %s" % json.dumps(sc))
    info, _ = call(w, "get_kernel_info", notebook_handle=h)
    caps = info.get("capabilities") or {}
    if not caps.get("debugger") or caps.get("debugger_from") != "kernelspec":
        fail("python3 capabilities: %s" % json.dumps(caps))
    ok("python3 capabilities: debugger from the kernelspec, protocol %s"
       % caps.get("protocol_version"))

    # Idle: capped and fast, user names only.
    before = count(w, h)
    t0 = time.monotonic()
    sc, text = call(w, "list_variables", notebook_handle=h)
    dt = time.monotonic() - t0
    names = {v["name"]: v for v in sc["variables"]}
    if set(names) != {"big", "s", "n"}:
        fail("variables %s: %s" % (sorted(names), text))
    if len(names["s"]["repr"]) > 210 or len(names["big"]["repr"]) > 210:
        fail("reprs not capped: %s" % text)
    if names["big"].get("len") not in (None, 10**7) or \
            names["n"]["repr"] != "42":
        fail("variables: %s" % json.dumps(sc))
    if dt > 2:
        fail("list_variables of a 10^7 list took %.2f s" % dt)
    ok("list_variables idle: big, s, n (no modules, _ names, IPython's), "
       "reprs capped, %.0f ms" % (dt * 1000))

    # Completion and inspection: no code runs, the count stays.
    sc, text = call(w, "complete_code", notebook_handle=h, code="import o")
    if "os" not in [m["text"] for m in sc["matches"]]:
        fail("complete 'import o': %s" % text)
    sc, text = call(w, "inspect_code", notebook_handle=h, code="len",
                    cursor_pos=3)
    if not sc["found"] or "number of items" not in sc["text"] or \
            "\x1b" in sc["text"]:
        fail("inspect len: %s" % json.dumps(sc))
    if count(w, h) != before:
        fail("execution_count moved: %s -> %s" % (before, count(w, h)))
    ok("complete_code 'import o' has os; inspect_code len gives its "
       "docstring, plain; execution_count unchanged at %s" % before)

    # While a cell sleeps: answered from the debugger, the sleep goes on.
    _, sc, _, _ = run(w, h, "import time\ntime.sleep(30)\nslept = 1", 0)
    eid = sc["execution_id"]
    time.sleep(0.5)
    t0 = time.monotonic()
    sc, text = call(w, "list_variables", notebook_handle=h)
    dt = time.monotonic() - t0
    if not sc["while_busy"] or "n" not in [v["name"] for v in
                                           sc["variables"]]:
        fail("variables while busy: %s" % json.dumps(sc))
    if dt >= 1:
        fail("variables while busy took %.2f s" % dt)
    # Completion waits behind the cell for its bound, then says why.
    t1 = time.monotonic()
    e = call_err(w, "complete_code", notebook_handle=h, code="import o")
    dt1 = time.monotonic() - t1
    if e["code"] != "busy" or eid not in e["message"] or not 4 < dt1 < 9:
        fail("complete while busy (%.1f s): %s" % (dt1, json.dumps(e)))
    st, _ = call(w, "get_results", notebook_handle=h, execution_id=eid,
                 timeout_secs=0)
    if st["status"] != "running":
        fail("the sleep was disturbed: %s" % json.dumps(st))
    call(w, "interrupt_kernel", notebook_handle=h)
    st, _ = call(w, "get_results", notebook_handle=h, execution_id=eid,
                 timeout_secs=20)
    if st["status"] != "interrupted":
        fail("interrupted sleep: %s" % json.dumps(st))
    ok("list_variables while time.sleep(30) runs: %.0f ms, while_busy, "
       "the sleep still running until interrupted; complete_code behind "
       "it: busy naming the run after %.1f s" % (dt * 1000, dt1))

    # input(): the wait returns at once, send_input answers, once.
    _, sc, text, dt = run(w, h, "x = input('name? ')\nprint('hello', x)",
                          20)
    eid = sc["execution_id"]
    inp = sc.get("input") or {}
    if sc["status"] != "input_required" or inp.get("prompt") != "name? " \
            or inp.get("password") or dt > 10:
        fail("input(): %s (%.1f s)" % (json.dumps(sc), dt))
    st, _ = call(w, "get_results", notebook_handle=h, execution_id=eid,
                 timeout_secs=20)
    if st["status"] != "input_required":
        fail("get_results of a run asking: %s" % json.dumps(st))
    call(w, "send_input", notebook_handle=h, execution_id=eid,
         value="world")
    # A second client's answer comes too late.
    w2 = Worker(BUILD, ENV, os.path.join(TMP, "worker2.log"))
    sc2, _ = call(w2, "connect_notebook", path=nb)
    e = call_err(w2, "send_input", notebook_handle=sc2["notebook_handle"],
                 execution_id=eid, value="late")
    if e["code"] != "input_not_pending":
        fail("second answer: %s" % json.dumps(e))
    w2.close()
    st, text = call(w, "get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=20)
    if st["status"] != "done" or "hello world" not in text:
        fail("after send_input: %s" % text)
    ok("input(): run_cells returned input_required in %.1f s with the "
       "prompt; send_input answered; a second client got "
       "input_not_pending" % dt)

    # getpass(): the password is nowhere but in the kernel.
    _, sc, _, _ = run(w, h, "import getpass\npw = getpass.getpass('pw: ')\n"
                      "print(len(pw))", 20)
    eid = sc["execution_id"]
    if sc["status"] != "input_required" or not sc["input"]["password"]:
        fail("getpass: %s" % json.dumps(sc))
    call(w, "send_input", notebook_handle=h, execution_id=eid,
         value=PASSWORD)
    st, text = call(w, "get_results", notebook_handle=h, execution_id=eid,
                    timeout_secs=20)
    if st["status"] != "done" or str(len(PASSWORD)) not in text:
        fail("after the password: %s" % text)
    call(w, "save_notebook", notebook_handle=h)
    ok("getpass(): answered, the cell saw %d characters" % len(PASSWORD))

    # Bad arguments: typed errors, nothing sent to the kernel.
    for tool, args in (("list_variables", {"filter": "a\x00b"}),
                       ("list_variables", {"max": 0}),
                       ("list_variables", {"filter": "x" * 2000}),
                       ("complete_code", {"code": "x", "cursor_pos": -1}),
                       ("inspect_code", {"code": "x", "detail_level": 2}),
                       ("send_input", {"execution_id": eid,
                                       "value": "v" * 70000})):
        e = call_err(w, tool, notebook_handle=h, **args)
        if e["code"] != "invalid_argument":
            fail("%s %s: %s" % (tool, list(args), json.dumps(e)))
    e = call_err(w, "send_input", notebook_handle=h, execution_id="nosuch",
                 value="x")
    if e["code"] != "input_not_pending":
        fail("send_input to no run: %s" % json.dumps(e))
    ok("bad filter, max, cursor_pos, detail_level, value: "
       "invalid_argument; an unknown run: input_not_pending")

    # A pending input ends with the run on interrupt.
    _, sc, _, _ = run(w, h, "input('never: ')", 20)
    eid = sc["execution_id"]
    if sc["status"] != "input_required":
        fail("input before interrupt: %s" % json.dumps(sc))
    call(w, "interrupt_kernel", notebook_handle=h)
    st, _ = call(w, "get_results", notebook_handle=h, execution_id=eid,
                 timeout_secs=20)
    if st["status"] != "interrupted":
        fail("interrupted input: %s" % json.dumps(st))
    e = call_err(w, "send_input", notebook_handle=h, execution_id=eid,
                 value="x")
    if e["code"] != "input_not_pending":
        fail("answer after interrupt: %s" % json.dumps(e))
    ok("a pending input ended with the interrupted run; a late answer "
       "is input_not_pending")

    # And with a restart.
    _, sc, _, _ = run(w, h, "input('again: ')", 20)
    eid = sc["execution_id"]
    if sc["status"] != "input_required":
        fail("input before restart: %s" % json.dumps(sc))
    call(w, "restart_kernel", notebook_handle=h)
    st, _ = call(w, "get_results", notebook_handle=h, execution_id=eid,
                 timeout_secs=0)
    e = call_err(w, "send_input", notebook_handle=h, execution_id=eid,
                 value="x")
    if st["status"] != "interrupted" or e["code"] != "input_not_pending":
        fail("input after restart: %s %s" % (json.dumps(st), json.dumps(e)))
    ok("a pending input ended with the run on restart_kernel")
    return nb


def ir_part(w):
    nb = os.path.join(TMP, "r.ipynb")
    sc, _ = call(w, "create_notebook", path=nb, kernel="ir")
    h = sc["notebook_handle"]
    _, sc, _, _ = run(w, h, "a <- 1:10\nb <- 'hello'", 50)
    if sc["status"] != "done":
        fail("R setup: %s" % json.dumps(sc))
    info, _ = call(w, "get_kernel_info", notebook_handle=h)
    if (info.get("capabilities") or {}).get("debugger"):
        fail("ir has no debugger: %s" % json.dumps(info))
    before = count(w, h)
    sc, text = call(w, "list_variables", notebook_handle=h)
    names = {v["name"]: v for v in sc["variables"]}
    if set(names) != {"a", "b"} or names["a"].get("len") != 10 or \
            sc["while_busy"] or sc.get("via") != "execute":
        fail("R variables: %s" % json.dumps(sc))
    if count(w, h) != before:
        fail("R execution_count moved: %s -> %s" % (before, count(w, h)))
    _, sc, _, _ = run(w, h, "Sys.sleep(30)", 0)
    eid = sc["execution_id"]
    time.sleep(0.5)
    e = call_err(w, "list_variables", notebook_handle=h)
    if e["code"] != "busy" or eid not in e["message"]:
        fail("R variables while busy: %s" % json.dumps(e))
    call(w, "interrupt_kernel", notebook_handle=h)
    ok("ir: variables when idle (execution_count %s unchanged), busy "
       "naming run %s while it sleeps" % (before, eid))


def xpython_part(w):
    """xeus-python: raw mode has no debugger and no user_expressions;
    the IPython mode declares a debugger that an unstarted
    inspectVariables would abort, so both are asked when idle."""
    for name in ("xpython-raw", "xpython"):
        sc, _ = call(w, "create_notebook", kernel=name)
        h = sc["notebook_handle"]
        _, sc, _, _ = run(w, h, "a = [1, 2, 3]", 50)
        if sc["status"] != "done":
            fail("%s setup: %s" % (name, json.dumps(sc)))
        before = count(w, h)
        sc, text = call(w, "list_variables", notebook_handle=h, filter="a*")
        v = {x["name"]: x for x in sc["variables"]}
        if v.get("a", {}).get("len") != 3 or sc.get("via") != "execute":
            fail("%s variables: %s" % (name, json.dumps(sc)))
        if count(w, h) != before:
            fail("%s execution_count moved" % name)
        # A pattern is data, never code: quotes and backslashes match none.
        sc, _ = call(w, "list_variables", notebook_handle=h,
                     filter="a')\"\\; import os")
        if sc["total"] != 0:
            fail("%s quoted filter: %s" % (name, json.dumps(sc)))
        info, _ = call(w, "get_kernel_info", notebook_handle=h)
        if info["state"] != "idle" or \
                info["capabilities"]["variables_while_busy"]:
            fail("%s after variables: %s" % (name, json.dumps(info)))
    ok("xpython-raw and xpython: variables by a silent execute (a len 3), "
       "execution_count unchanged, the kernel alive")


def main():
    w = Worker(BUILD, ENV, os.path.join(TMP, "worker.log"))
    try:
        nb = python_part(w)
        if subprocess.run(["R", "--version"], capture_output=True).returncode \
                == 0:
            ir_part(w)
        else:
            print("no R: the ir part skipped")
        if os.path.exists("/usr/bin/xpython"):
            xpython_part(w)
    finally:
        w.close()
    return nb


if __name__ == "__main__":
    print(main())
