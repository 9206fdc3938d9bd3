#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""upgrade-gen.py: generated nbformat 2 and 3 notebooks, and nbformat's
own upgrade of each, for test-room-upgrade's comparison.

usage: upgrade-gen.py DIR COUNT SEED

Writes DIR/gNNNN.ipynb and, beside it, gNNNN.want (what
nbformat.write(nbformat.read(f, as_version=4)) writes) or gNNNN.refused
(nbformat cannot read it).  The notebooks mix every conversion the
upgrade does: heading levels, html/raw cells, lists of lines in both
versions' join rules, pyout/pyerr/display_data/stream outputs with v3's
short keys, a "json" of any JSON value, output metadata, worksheets, and
some v2 images that are not ASCII (which nbformat refuses).  Left out on
purpose (known differences, docs/decisions/007-older-nbformats.md): a
text cell without source and mimetype-keyed lists in v3 outputs.
"""
import io
import json
import os
import random
import sys
import warnings

import nbformat

DIR, COUNT, SEED = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
R = random.Random(SEED)
TXT = ["", "a", "a\n", "x\ny", "\r\n", "\u00e9\u2028\u00fc", "tab\t", "\n\n",
       "q\"uote", "\\", "\x0b", "last\n", "\x1c", "\u0085"]


def s():
    return R.choice(TXT) + R.choice(TXT)


def lines():
    v = [s() for _ in range(R.randint(0, 3))]
    return v if R.random() < .5 else "".join(v)


def output(v2):
    t = R.choice(["pyout", "display_data", "pyerr", "stream", "stream",
                  "clear_output"])
    o = {"output_type": t}
    if t in ("pyout", "display_data"):
        keys = ["text", "html", "svg", "latex", "png", "jpeg", "javascript",
                "json", "text/markdown"]
        for k in R.sample(keys, R.randint(0, 4)):
            if k == "json":
                v = R.choice([{"a": 1}, [1, 2.5], "s", None, 3, 1e300, -0.0,
                              {"b": [True, "\u00e9"]}])
                j = json.dumps(v, indent=R.choice([None, 1]))
                o[k] = j.splitlines(R.random() < .5) \
                    if R.random() < .5 else j
            elif k in ("png", "jpeg"):
                o[k] = R.choice(["AAAA", "iVBO\n", "", "B",
                                 ["AA", "AA"] if v2 else "AAAA",
                                 "\u00e9" if R.random() < .1 else "C"])
            elif k == "text/markdown":
                o[k] = s()
            else:
                o[k] = lines()
        if R.random() < .5:
            o["metadata"] = R.choice([{}, {"png": {"width": 3}},
                                      {"isolated": True}])
        if t == "pyout" and R.random() < .7:
            o["prompt_number"] = R.randint(0, 9)
    elif t == "pyerr":
        o.update({"ename": "E", "evalue": s(), "traceback": [s()]})
    elif t == "stream":
        if R.random() < .8:
            o["stream"] = R.choice(["stdout", "stderr"])
        o["text"] = lines()
    return o


def cell(v2):
    t = R.choice(["code", "markdown", "html"] if v2 else
                 ["code", "code", "markdown", "raw", "heading", "html"])
    c = {"cell_type": t}
    if (not v2 or R.random() < .3) and R.random() < .8:
        c["metadata"] = R.choice([{}, {"tags": ["a"]}, {"trusted": True},
                                  {"slideshow": {"slide_type": "slide"}}])
    if t == "code":
        c["input"] = lines()
        c["language"] = "python"
        if R.random() < .7:
            c["collapsed"] = R.random() < .5
        if R.random() < .7:
            c["prompt_number"] = R.randint(1, 99)
        c["outputs"] = [output(v2) for _ in range(R.randint(0, 3))]
    else:
        c["source"] = lines()
        if t == "heading" and R.random() < .8:
            c["level"] = R.randint(0, 7)
    return c


def notebook():
    v2 = R.random() < .3
    d = {"metadata": R.choice([{}, {"name": "x"},
                               {"name": "", "signature": "sha256:1"},
                               {"kernelspec": {"name": "python3"}}]),
         "nbformat": 2 if v2 else 3}
    if not v2:
        d["nbformat_minor"] = 0
    d["worksheets"] = [{"cells": [cell(v2) for _ in range(R.randint(0, 5))],
                        "metadata": {}} for _ in range(R.randint(1, 3))]
    return d


for i in range(COUNT):
    base = os.path.join(DIR, "g%04d" % i)
    with open(base + ".ipynb", "w", encoding="utf-8") as f:
        json.dump(notebook(), f, indent=R.choice([None, 1]),
                  ensure_ascii=R.random() < .5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.read(base + ".ipynb", as_version=4)
            out = io.StringIO()
            nbformat.write(nb, out)
        with open(base + ".want", "w", encoding="utf-8") as f:
            f.write(out.getvalue())
    except Exception as e:
        with open(base + ".refused", "w", encoding="utf-8") as f:
            f.write("%s: %s\n" % (type(e).__name__, e))
