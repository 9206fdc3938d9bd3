#!/usr/bin/python3
# SPDX-License-Identifier: ISC
# editor-standin.py: a person's editor saving a notebook, for
# worker-merge.test.mjs.  Reads one JSON request a line on stdin,
# answers one JSON line on stdout:
#   {"mode": "jupyter"|"vscode", "path": P, "ops": [...]}
#     -> {"t": wall-clock ms right after the file was written}
# jupyter: nbformat.read, change, nbformat.write to a temporary file in
# the same directory renamed over the notebook (Jupyter Server's atomic
# save; keys sorted, as nbformat writes them).  vscode: the JSON as it
# is, ids and metadata kept in their order, written in place with
# indent 1 (VS Code's serializer).  Ops: {op: "set", id, source},
# {op: "insert", at, source, cell_type?, id?}, {op: "delete", id},
# {op: "move", id, to}; {op: "meta", set: {key: value}, del: [key]}
# changes the notebook's metadata; {op: "create", cells: [[type, source,
# id]...]} makes a new file.
import json
import os
import sys
import time

import nbformat


def cell_source(c):
    s = c.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def new_cell(kind, source, cid):
    if kind == "markdown":
        c = nbformat.v4.new_markdown_cell(source)
    else:
        c = nbformat.v4.new_code_cell(source)
    if cid:
        c["id"] = cid
    return c


def index_of(cells, cid):
    for i, c in enumerate(cells):
        if c.get("id") == cid:
            return i
    raise KeyError(cid)


def apply(cells, op):
    kind = op["op"]
    if kind == "set":
        cells[index_of(cells, op["id"])]["source"] = op["source"]
    elif kind == "insert":
        c = new_cell(op.get("cell_type", "code"), op["source"],
                     op.get("id"))
        if not isinstance(cells, list):
            raise TypeError("cells")
        cells.insert(op["at"], json.loads(json.dumps(c)))
    elif kind == "delete":
        del cells[index_of(cells, op["id"])]
    elif kind == "move":
        c = cells.pop(index_of(cells, op["id"]))
        cells.insert(op["to"], c)
    else:
        raise ValueError(kind)


def apply_meta(md, ops):
    for op in ops:
        if op["op"] != "meta":
            continue
        md.update(op.get("set", {}))
        for k in op.get("del", []):
            del md[k]


def save(req):
    path = req["path"]
    ops = req.get("ops", [])
    cell_ops = [op for op in ops if op["op"] != "meta"]
    if ops and ops[0]["op"] == "create":
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3",
                                     "display_name": "Python 3",
                                     "language": "python"}
        for kind, source, cid in ops[0]["cells"]:
            nb.cells.append(new_cell(kind, source, cid))
        tmp = path + ".tmp-create"
        nbformat.write(nb, tmp)
        os.replace(tmp, path)
        return
    if req["mode"] == "jupyter":
        nb = nbformat.read(path, as_version=4)
        cells = [json.loads(json.dumps(c)) for c in nb.cells]
        for op in cell_ops:
            apply(cells, op)
        nb.cells = [nbformat.from_dict(c) for c in cells]
        apply_meta(nb.metadata, ops)
        tmp = os.path.join(os.path.dirname(path),
                           ".~" + os.path.basename(path))
        nbformat.write(nb, tmp)
        os.replace(tmp, path)
    else:
        with open(path) as f:
            nb = json.load(f)
        for op in cell_ops:
            apply(nb["cells"], op)
        apply_meta(nb["metadata"], ops)
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        with open(path, "w") as f:
            f.write(text)


def main():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            save(req)
            out = {"t": time.time() * 1000}
        except Exception as e:  # the test says what went wrong
            out = {"error": repr(e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


main()
