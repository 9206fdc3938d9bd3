# SPDX-License-Identifier: ISC
"""nbschema.py: what nbformat's validator refuses in outputs and metadata
is a warning when the file is opened, and what it accepts is not (issue
35: 11 of 16 single-defect variants of a clean 4.5 file opened without
a word).  python3-nbformat is the reference: for each variant of a clean
nbformat 4.5 notebook (one defect each), nbformat.validate() fails if and
only if connect_notebook gives a warning.  Also: nteract's dark-mode test
(codemirror_mode null), a v3 file of 193 cells (one warning, not one a
cell) and a 4.5 file with many defects (at most 21 warnings, the rest
counted).  Usage: nbschema.py BUILDDIR SRCDIR TMPDIR
"""
import copy
import json
import os
import sys

import nbformat
from nbformat import v3

builddir, srcdir, tmp = sys.argv[1:4]
sys.path.insert(0, os.path.join(srcdir, "tests", "notebooks"))
import mcp  # noqa: E402

clean = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3",
                       "language": "python"},
        "language_info": {"name": "python", "version": "3.11.2",
                          "codemirror_mode": {"name": "ipython",
                                              "version": 3},
                          "file_extension": ".py",
                          "mimetype": "text/x-python",
                          "pygments_lexer": "ipython3"},
        "title": "clean", "authors": [{"name": "A"}]},
    "cells": [
        {"cell_type": "markdown", "id": "m1",
         "metadata": {"tags": ["intro"], "jupyter": {"source_hidden": False}},
         "source": "# Title", "attachments": {
             "a.png": {"image/png": "iVBORw0KGgo="}}},
        {"cell_type": "code", "id": "c1", "execution_count": 1,
         "metadata": {"collapsed": False, "scrolled": "auto",
                      "name": "first", "tags": ["a", "b"],
                      "execution": {"iopub.status.busy": "2024-01-01"}},
         "source": "print(1)\n1",
         "outputs": [
             {"output_type": "stream", "name": "stdout", "text": ["1\n"]},
             {"output_type": "execute_result", "execution_count": 1,
              "data": {"text/plain": "1",
                       "application/json": {"a": [1, 2]}},
              "metadata": {}},
             {"output_type": "display_data",
              "data": {"image/png": "iVBORw0KGgo=",
                       "text/plain": ["<Figure>"]},
              "metadata": {"image/png": {"width": 10}}},
             {"output_type": "error", "ename": "E", "evalue": "v",
              "traceback": ["t1", "t2"]}]},
        {"cell_type": "raw", "id": "r1",
         "metadata": {"format": "text/html"}, "source": "<b/>"}]}


def variant(name, change):
    nb = copy.deepcopy(clean)
    change(nb)
    return name, nb


def cell(nb, i):
    return nb["cells"][i]


def out(nb, j):
    return nb["cells"][1]["outputs"][j]


def put(d, k, v):
    d[k] = v


def delete(d, k):
    del d[k]


variants = [
    variant("clean", lambda nb: None),
    variant("stream without name", lambda nb: delete(out(nb, 0), "name")),
    variant("stream text a number", lambda nb: put(out(nb, 0), "text", 5)),
    variant("stream with an extra key",
            lambda nb: put(out(nb, 0), "extra", 1)),
    variant("stream name a number", lambda nb: put(out(nb, 0), "name", 1)),
    variant("result without metadata",
            lambda nb: delete(out(nb, 1), "metadata")),
    variant("result without execution_count",
            lambda nb: delete(out(nb, 1), "execution_count")),
    variant("result execution_count -1",
            lambda nb: put(out(nb, 1), "execution_count", -1)),
    variant("result data a list", lambda nb: put(out(nb, 1), "data", [])),
    variant("result text/plain a number",
            lambda nb: put(out(nb, 1)["data"], "text/plain", 3)),
    variant("display metadata a list",
            lambda nb: put(out(nb, 2), "metadata", [])),
    variant("display without data", lambda nb: delete(out(nb, 2), "data")),
    variant("display with execution_count",
            lambda nb: put(out(nb, 2), "execution_count", 1)),
    variant("error without traceback",
            lambda nb: delete(out(nb, 3), "traceback")),
    variant("error traceback of numbers",
            lambda nb: put(out(nb, 3), "traceback", [1, 2])),
    variant("error evalue null", lambda nb: put(out(nb, 3), "evalue", None)),
    variant("unknown output_type",
            lambda nb: put(out(nb, 0), "output_type", "print")),
    variant("output not an object",
            lambda nb: nb["cells"][1]["outputs"].append("text")),
    variant("codemirror_mode null", lambda nb: put(
        nb["metadata"]["language_info"], "codemirror_mode", None)),
    variant("language_info without name",
            lambda nb: delete(nb["metadata"]["language_info"], "name")),
    variant("kernelspec without display_name",
            lambda nb: delete(nb["metadata"]["kernelspec"], "display_name")),
    variant("kernelspec a string",
            lambda nb: put(nb["metadata"], "kernelspec", "python3")),
    variant("title a number", lambda nb: put(nb["metadata"], "title", 1)),
    variant("authors an object",
            lambda nb: put(nb["metadata"], "authors", {})),
    variant("tags with a comma",
            lambda nb: put(cell(nb, 1)["metadata"], "tags", ["a,b"])),
    variant("tags repeated",
            lambda nb: put(cell(nb, 1)["metadata"], "tags", ["a", "a"])),
    variant("tags a string",
            lambda nb: put(cell(nb, 0)["metadata"], "tags", "a")),
    variant("name empty", lambda nb: put(cell(nb, 1)["metadata"], "name", "")),
    variant("collapsed a string",
            lambda nb: put(cell(nb, 1)["metadata"], "collapsed", "yes")),
    variant("scrolled a number",
            lambda nb: put(cell(nb, 1)["metadata"], "scrolled", 2)),
    variant("execution value a number", lambda nb: put(
        cell(nb, 1)["metadata"]["execution"], "iopub.status.busy", 5)),
    variant("jupyter a list",
            lambda nb: put(cell(nb, 2)["metadata"], "jupyter", [])),
    variant("raw format a number",
            lambda nb: put(cell(nb, 2)["metadata"], "format", 1)),
    variant("attachment value a number", lambda nb: put(
        cell(nb, 0)["attachments"]["a.png"], "image/png", 1)),
    # What the schema leaves free must stay free of warnings.
    variant("unknown metadata keys (free)", lambda nb: (
        put(nb["metadata"], "myext", {"x": None}),
        put(cell(nb, 1)["metadata"], "myext", [1]))),
    variant("json output of any shape (free)", lambda nb: put(
        out(nb, 1)["data"], "application/vnd.x+json", [1, None])),
    variant("output metadata of any shape (free)", lambda nb: put(
        out(nb, 2)["metadata"], "k", [None])),
]

env = dict(os.environ)
w = mcp.Worker(builddir, env, os.path.join(tmp, "worker.err"))
failed = []
agree = 0


def check(cond, what):
    if not cond:
        failed.append(what)
        print("FAIL: " + what)


def opened(nb, name):
    path = os.path.join(tmp, "nb-%d.ipynb" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        f.write(nb if isinstance(nb, str) else json.dumps(nb))
    sc, text, err = w.call("connect_notebook", path=path)
    if err:
        check(False, "%s: not opened: %s" % (name, text))
        return None
    w.call("disconnect_notebook", notebook_handle=sc["notebook_handle"])
    return sc.get("warnings") or []


for name, nb in variants:
    try:
        nbformat.validate(nbformat.from_dict(copy.deepcopy(nb)))
        valid = True
    except nbformat.ValidationError:
        valid = False
    warnings = opened(nb, name)
    if warnings is None:
        continue
    ok = valid == (len(warnings) == 0)
    agree += ok
    check(ok, "%s: nbformat says %s, runtimed warned %d: %s" % (
        name, "valid" if valid else "invalid", len(warnings),
        [x["message"] for x in warnings][:3]))
print("ok: %d of %d variants: a warning exactly where nbformat's validator "
      "refuses" % (agree, len(variants)))

# A v3 lecture of 193 cells: one warning, not one a cell.
lecture = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[
    v3.new_code_cell(input="x = %d" % i) for i in range(193)])])
warnings = opened(nbformat.writes(lecture, version=3), "v3 lecture")
check(warnings is not None and len(warnings) == 1,
      "a v3 file of 193 cells: %s warnings" % (warnings and len(warnings)))
# A 4.5 file where 50 cells lack an id: one warning counts them.
nb = copy.deepcopy(clean)
nb["cells"] = [{"cell_type": "markdown", "metadata": {}, "source": "x"}
               for i in range(50)]
warnings = opened(nb, "50 cells without id")
check(warnings is not None and len(warnings) == 1 and
      "50 cells have no id" in warnings[0]["message"],
      "50 cells without an id: %s" % (warnings and warnings[:2]))
# Many defects: at most 20 listed, then one that counts the rest.
nb = copy.deepcopy(clean)
nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": 1,
                              "text": "x"} for i in range(100)]
warnings = opened(nb, "100 bad outputs")
check(warnings is not None and len(warnings) == 21 and
      "80 more" in warnings[-1]["message"],
      "100 bad outputs: %s warnings, last %s" % (
          warnings and len(warnings), warnings and warnings[-1]))
print("ok: a v3 file and missing ids are one warning; 100 defects are 20 "
      "and a count")
w.close()
sys.exit(1 if failed else 0)
