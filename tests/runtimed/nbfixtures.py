# SPDX-License-Identifier: ISC
"""Write notebooks with Jupyter's own nbformat for the round-trip tests.

usage: nbfixtures.py OUTDIR
Writes OUTDIR/fixture-*.ipynb (nbformat 4.5, by nbformat.write) and
OUTDIR/old-44.ipynb (nbformat 4.4 without cell ids, written by hand).
"""
import json
import os
import sys

import nbformat
from nbformat.v4 import (new_code_cell, new_markdown_cell, new_notebook,
                         new_output, new_raw_cell)

out = sys.argv[1]
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
       "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

floats = [0.1, 0.2, 1 / 3, 1e16, 1e15, 123456789.123, 1e-5, 0.0001,
          5e-324, 1.7976931348623157e308, 2.5, 100.0, -0.0, 1e22, 1.5e-7,
          12345678901234567890.0, 3.14159]

meta = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)",
                   "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.11.2",
                      "codemirror_mode": {"name": "ipython", "version": 3}},
    "x_unknown": {"float": 0.1, "floats": floats, "int": 3,
                  "bigint": 9007199254740993, "neg": -42,
                  "list": [1, 2.0, None, True, False, [], {}],
                  "unicode \u00fcn\u00ef": "\u00e7\u00f8d\u00e9 \u2713 \U0001F600",
                  "ctl": "a\x01b\x7f\u2028c\x1f",
                  "esc": "q\"b\\s/t\tn\r\n\x08\x0c",
                  "Zed": 1, "alpha": 2, "_under": 3, "Alpha": 4},
}

nb = new_notebook(metadata=meta)
nb.cells.append(new_markdown_cell(
    "# Title \u00e9\u00e8 \U0001F680\n\nSome *markdown*\nwith lines"))
nb.cells.append(new_code_cell(
    "import sys\nfor i in range(3):\n    print(i)\r\nx = '\u00e9\U0001F600'\n",
    execution_count=1,
    outputs=[new_output("stream", name="stdout", text="0\n1\n2\n"),
             new_output("stream", name="stderr", text="warn\rmore\r\nend")]))
nb.cells.append(new_code_cell(
    "display(img)", execution_count=2,
    outputs=[new_output("display_data",
                        data={"image/png": PNG,
                              "text/plain": "<Figure>\nline 2\n"},
                        metadata={"image/png": {"width": 10,
                                                "height": 10.5}})]))
nb.cells.append(new_code_cell(
    "x", execution_count=3,
    outputs=[new_output("execute_result", execution_count=3,
                        data={"text/plain": "42",
                              "text/html": "<b>42</b>\n<i>x</i>",
                              "application/json": {"a": [1, 2.5, "s\nt"]},
                              "application/vnd.custom+json": {"k": "v\nw"},
                              "image/svg+xml": "<svg>\n</svg>\n",
                              "application/javascript": "var a;\nvar b;"})]))
nb.cells.append(new_code_cell(
    "1/0", execution_count=4,
    outputs=[new_output("error", ename="ZeroDivisionError",
                        evalue="division by zero",
                        traceback=["\x1b[0;31m------------------\x1b[0m",
                                   "\x1b[0;31mZeroDivisionError\x1b[0m"
                                   "Traceback (most recent call last)",
                                   "Cell \x1b[0;32mIn[4], line 1\x1b[0m\n"
                                   "\x1b[0;32m----> 1\x1b[0m 1/0\n"])]))
md = new_markdown_cell("![img](attachment:img.png)\nline two\n")
md["attachments"] = {"img.png": {"image/png": PNG,
                                 "text/plain": "alt\ntext"}}
nb.cells.append(md)
nb.cells.append(new_raw_cell("raw\rtext\x0bmore\u2029end\x1cx\x85y",
                             metadata={"format": "text/x-python",
                                       "tags": ["a", "b"]}))
nb.cells.append(new_code_cell("", execution_count=None))
nb.cells.append(new_code_cell("# only\n\n\nblank lines\n\n",
                              metadata={"tags": ["x"], "collapsed": True,
                                        "scrolled": False}))
nbformat.validate(nb)
nbformat.write(nb, os.path.join(out, "fixture-full.ipynb"))

empty = new_notebook()
nbformat.write(empty, os.path.join(out, "fixture-empty.ipynb"))

# nbformat's own reading and writing of its file is the reference too.
again = nbformat.read(os.path.join(out, "fixture-full.ipynb"), as_version=4)
nbformat.write(again, os.path.join(out, "fixture-reread.ipynb"))

old = {
    "nbformat": 4, "nbformat_minor": 4,
    "metadata": {"kernelspec": {"display_name": "Python 3",
                                "language": "python", "name": "python3"}},
    "cells": [
        {"cell_type": "code", "execution_count": 1, "metadata": {},
         "source": ["print('hi')\n", "x = 1"],
         "outputs": [{"output_type": "stream", "name": "stdout",
                      "text": ["hi\n"]}]},
        {"cell_type": "markdown", "metadata": {}, "source": "# head"},
        {"cell_type": "raw", "metadata": {}, "source": []},
    ],
}
with open(os.path.join(out, "old-44.ipynb"), "w") as f:
    json.dump(old, f)

# Large outputs, unicode of every plane, ANSI tracebacks (nbformat.write).
big = new_notebook(metadata=dict(meta))
png = (PNG * 40000)[:2 * 1024 * 1024]
lines = "".join("line %d \u00e9\u4e2d\u0627\U0001F600 x\u0301\n" % i
                for i in range(20000))
tb = ["\x1b[0;31m" + "-" * 75 + "\x1b[0m",
      "\x1b[0;31mValueError\x1b[0m                                Traceback "
      "(most recent call last)"]
tb += ["\x1b[0;32mFile \x1b[0;32m~/x.py:%d\x1b[0m, in \x1b[0;36mf%d\x1b[0;34m"
       "(\x1b[0m\x1b[0;34m)\x1b[0m\n\x1b[1;32m----> %d\x1b[0m raise "
       "\x1b[38;5;167mValueError\x1b[39m(\x1b[38;5;124m\"\u00fcn\u00efc\u00f8d\u00e9"
       " \u2603\"\x1b[39m)\n" % (i, i, i) for i in range(200)]
big.cells.append(new_code_cell(
    "s = '\u4e2d\u6587 \u0639\u0631\u0628\u064a \U0001F468\u200D\U0001F469"
    "\u200D\U0001F467 \U00010348 \ufeff'\nprint(s * 3)",
    execution_count=7,
    outputs=[new_output("stream", name="stdout", text=lines),
             new_output("display_data", data={"image/png": png,
                                               "text/plain": "<big>"},
                        metadata={"image/png": {"width": 800}}),
             new_output("execute_result", execution_count=7,
                        data={"text/html": "<table>\n" + "<tr><td>\u00e9</td>"
                              "</tr>\n" * 5000 + "</table>",
                              "text/plain": "x" * 100000}),
             new_output("error", ename="ValueError",
                        evalue="\u00fcn\u00efc\u00f8d\u00e9 \u2603",
                        traceback=tb)]))
nbformat.validate(big)
nbformat.write(big, os.path.join(out, "fixture-large.ipynb"))

# nbformat 4.0-4.4 files without cell ids, in Jupyter's own layout.
def old_nb(minor):
    nbo = {
        "nbformat": 4, "nbformat_minor": minor,
        "metadata": {"kernelspec": {"display_name": "Python 3",
                                    "language": "python", "name": "python3"},
                     "x_custom": {"k": [1, 2.5, None]}},
        "cells": [
            {"cell_type": "code", "execution_count": 3,
             "metadata": {"collapsed": False, "tags": ["t"]},
             "source": ["print('h\u00e9')\n", "1/0"],
             "outputs": [{"output_type": "stream", "name": "stdout",
                          "text": ["h\u00e9\n"]},
                         {"output_type": "error", "ename": "ZeroDivisionError",
                          "evalue": "division by zero",
                          "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m"]},
                         {"output_type": "execute_result", "execution_count": 3,
                          "metadata": {"m": 1},
                          "data": {"text/plain": ["1\n", "2"]}}]},
            {"cell_type": "markdown", "metadata": {},
             "source": ["# h\u00e9ad\n", "![a](attachment:a.png)"],
             "attachments": {"a.png": {"image/png": PNG}}},
            {"cell_type": "raw", "metadata": {"format": "text/plain"},
             "source": []},
        ],
    }
    if minor < 1:  # attachments came with 4.1
        del nbo["cells"][1]["attachments"]
    return nbo

for minor in range(5):
    with open(os.path.join(out, "older-4%d.ipynb" % minor), "w",
              encoding="utf-8") as f:
        f.write(json.dumps(old_nb(minor), indent=1, sort_keys=True,
                           ensure_ascii=False) + "\n")
