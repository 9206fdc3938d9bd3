#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""catalog.py: what the tool catalog costs an agent.  Starts COMMAND as
an MCP server on stdio (runtimed-mcp, or runtimed-mcp-worker alone),
sends initialize and tools/list (every page), and prints per tool the
characters of its name, description and inputSchema as a client hands
them to the model: the compact JSON of {name, description, inputSchema}
(what JSON.stringify writes), counted in characters.  Then the sum, the
whole tools/list result, and the instructions of initialize.

Usage: catalog.py [--budget N] [--dump FILE] COMMAND [ARG...]
  --budget N  exit 1 if the sum is over N, a tool has no description of
              20 characters or more or no object inputSchema, or
              initialize returns no instructions
  --dump FILE write {instructions, tools} as JSON to FILE

Run it with a private RUNTIMED_SOCKET and RUNTIMED_STATE_DIR: tools/list
starts no daemon, but nothing here should meet the user's."""
import json
import subprocess
import sys


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def fetch(argv):
    """The initialize result and every tool of tools/list."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)

    def ask(mid, method, params=None):
        m = {"jsonrpc": "2.0", "id": mid, "method": method}
        if params is not None:
            m["params"] = params
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()
        for line in p.stdout:
            r = json.loads(line)
            if r.get("id") == mid:
                if "error" in r:
                    sys.exit("%s: %s" % (method, r["error"]))
                return r["result"]
        sys.exit("%s: no answer" % method)

    try:
        init = ask(1, "initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "catalog.py", "version": "1"}})
        p.stdin.write(json.dumps({"jsonrpc": "2.0",
                                  "method": "notifications/initialized"}) +
                      "\n")
        p.stdin.flush()
        tools, cursor, mid, whole = [], None, 2, 0
        while True:
            res = ask(mid, "tools/list",
                      {"cursor": cursor} if cursor is not None else None)
            tools += res["tools"]
            whole += len(compact(res))
            cursor = res.get("nextCursor")
            mid += 1
            if cursor is None:
                break
    finally:
        p.stdin.close()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
    return init, tools, whole


def main():
    args = sys.argv[1:]
    budget = dump = None
    while args and args[0].startswith("--"):
        if args[0] == "--budget" and len(args) > 1:
            budget, args = int(args[1]), args[2:]
        elif args[0] == "--dump" and len(args) > 1:
            dump, args = args[1], args[2:]
        else:
            sys.exit(__doc__)
    if not args:
        sys.exit(__doc__)
    init, tools, whole = fetch(args)
    bad, total = [], 0
    print("%-20s %6s %6s %6s" % ("tool", "chars", "descr", "input"))
    for t in tools:
        name = t.get("name", "?")
        desc = t.get("description")
        schema = t.get("inputSchema")
        n = len(compact({"name": name, "description": desc,
                         "inputSchema": schema}))
        total += n
        print("%-20s %6d %6d %6d" % (name, n, len(desc or ""),
                                     len(compact(schema))))
        if not isinstance(desc, str) or len(desc) < 20:
            bad.append("%s: no description of 20 characters" % name)
        if not isinstance(schema, dict) or schema.get("type") != "object":
            bad.append("%s: inputSchema is not an object schema" % name)
    instr = init.get("instructions")
    print("%d tools: names, descriptions and input schemas %d characters; "
          "tools/list %d; instructions %d" % (len(tools), total, whole,
                                              len(instr or "")))
    if not isinstance(instr, str) or not instr:
        bad.append("initialize returns no instructions")
    if budget is not None and total > budget:
        bad.append("the catalog is %d characters, over its budget of %d" %
                   (total, budget))
    if dump is not None:
        with open(dump, "w") as f:
            json.dump({"instructions": instr, "tools": tools}, f)
    for b in bad:
        print("FAIL " + b)
    if budget is not None and bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
