#!/usr/bin/python3
# SPDX-License-Identifier: ISC
"""Build the notebook corpus in tests/notebooks/corpus/ (checked in; run
again only to change it).  MANIFEST.json says, per file, what runtimed
must do with it:

  same     saved unchanged == nbformat.write(nbformat.read(f, 4)), byte
           for byte; "warnings" are substrings the connect result's
           warnings must hold (in order), none if absent
  fixed    opened with those warnings; the save equals nbformat's after
           the listed "repairs" ([path..., value] sets, [path..., null]
           deletes) and with runtimed's minted ids at "minted" indexes
  refused  notebook_unavailable whose message holds "error"; the file
           is not touched.  "nbformat" says whether nbformat refuses it
           too.
"""
import copy
import json
import os
import shutil

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
       "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
KS = {"kernelspec": {"display_name": "Python 3", "language": "python",
                     "name": "python3"},
      "language_info": {"name": "python", "version": "3.11.2"}}
manifest = {}
NBCLIENT_LICENSE = """\
The files in this directory are nbclient's test notebooks
(https://github.com/jupyter/nbclient, nbclient/tests/files), copied from
Debian's python3-nbclient package; spaces in names became dashes.

Copyright: 2020, Jupyter Development Team
License: BSD-3-clause
 All rights reserved.
 .
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions are met:
 .
 Redistributions of source code must retain the above copyright notice, this
 list of conditions and the following disclaimer.
 .
 Redistributions in binary form must reproduce the above copyright notice, this
 list of conditions and the following disclaimer in the documentation and/or
 other materials provided with the distribution.
 .
 Neither the name of the IPython Development Team nor the names of its
 contributors may be used to endorse or promote products derived from this
 software without specific prior written permission.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND
 ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED
 WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
 DISCLAIMED.  IN NO EVENT SHALL THE COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE
 FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
 DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
 SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
 CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
 OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
"""


def dump(nb):
    """As nbformat writes (lists of lines), so files look like real ones."""
    nb = copy.deepcopy(nb)
    for c in nb.get("cells", []):
        if isinstance(c, dict) and isinstance(c.get("source"), str):
            c["source"] = c["source"].splitlines(True)
    return json.dumps(nb, indent=1, sort_keys=True,
                      ensure_ascii=False) + "\n"


def put(name, data, kind, **info):
    if isinstance(data, dict):
        data = dump(data)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    manifest[name] = dict(kind=kind, **info)


def code(cid, src, outputs=(), count=None, **kw):
    c = {"cell_type": "code", "execution_count": count, "id": cid,
         "metadata": {}, "outputs": list(outputs), "source": src}
    c.update(kw)
    return c


def md(cid, src, **kw):
    c = {"cell_type": "markdown", "id": cid, "metadata": {}, "source": src}
    c.update(kw)
    return c


def nb(cells, minor=5, **kw):
    d = {"cells": cells, "metadata": copy.deepcopy(KS), "nbformat": 4,
         "nbformat_minor": minor}
    d.update(kw)
    return d


def rich():
    long = "".join("line %d of a long cell, in plain ASCII\n" % i
                   for i in range(150)) + "ünïcødé, 漢字, 🐍\n"
    return nb([
        md("intro", "# Title\n\nSome *markdown* with ![img](attachment:a.png)",
           attachments={"a.png": {"image/png": PNG}}),
        code("c-stream", "print('hi')\nimport sys; print('err', file=sys.stderr)",
             [{"name": "stdout", "output_type": "stream", "text": "hi\n"},
              {"name": "stderr", "output_type": "stream",
               "text": "err\nmore\r\nlast"}], 1),
        code("c-result", "{'a': 1}",
             [{"data": {"text/plain": "{'a': 1}",
                        "text/html": "<b>a</b>\n<i>1</i>",
                        "application/json": {"a": [1, 2.5, None, True]},
                        "application/vnd.custom+json": {"k": "v"},
                        "image/png": PNG,
                        "image/svg+xml": "<svg>\n</svg>"},
               "execution_count": 2, "metadata": {"isolated": True},
               "output_type": "execute_result"}], 2,
             metadata={"tags": ["x"], "collapsed": False,
                       "jupyter": {"source_hidden": True}}),
        code("c-error", "1/0",
             [{"ename": "ZeroDivisionError", "evalue": "division by zero",
               "output_type": "error",
               "traceback": ["\x1b[0;31m---\x1b[0m", "ZeroDivisionError"]}],
             3),
        code("c-display", "display('x')",
             [{"data": {"text/plain": "'x'"}, "metadata": {},
               "output_type": "display_data"}], 4),
        {"cell_type": "raw", "id": "raw-1", "metadata": {"format": "text/x-rst"},
         "source": "raw\u2028text\x0bwith odd breaks\x1c"},
        code("c-long", long, [], None),
        md("tail", "tab\there, quote \" backslash \\ and \u0000 NUL\u00a0"),
    ])


def main():
    os.makedirs(HERE, exist_ok=True)
    shutil.rmtree(HERE, ignore_errors=True)
    os.makedirs(HERE)

    # --- same: byte-identical to nbformat, no or only "kept" warnings.
    put("valid-45.ipynb", rich(), "same")

    future = rich()
    future["nbformat_minor"] = 6
    future["zz_top"] = {"b": [1, 2], "a": "é"}
    future["aa_first"] = True
    future["cells"][1]["zz_cell"] = {"new": "field"}
    future["cells"][1]["outputs"][0]["zz_output"] = 7
    future["cells"][2]["outputs"][0]["data"]["application/x-new"] = "new\nmime"
    future["cells"][0]["zz_md"] = None
    future["cells"].insert(3, {"cell_type": "widget", "id": "w-1",
                               "metadata": {"w": 1}, "source": "a\nb",
                               "state": {"model": [1, 2, 3]}})
    future["cells"].append({"cell_type": "canvas", "id": "w-2",
                            "metadata": {}, "strokes": [[0, 0], [1, 1]]})
    put("future-46.ipynb", future, "same")

    unk = nb([code("c1", "x = 1", [], None, zz_cell=1, attachments={}),
              md("m1", "text", outputs=[], execution_count=3),
              {"cell_type": "widget", "id": "w1", "metadata": {},
               "source": "w"}],
             zz_top="kept")
    put("unknown-keys-45.ipynb", unk, "same", warnings=[
        '"zz_top" is not a top-level key',
        'cell 0: "zz_cell" is not a key of a code cell',
        'cell 1: "execution_count" is not a key of a markdown cell',
        'cell 1: "outputs" is not a key of a markdown cell',
        'cell 2 is of type "widget"'])

    put("bad-id-pattern.ipynb",
        nb([md("has space", "a"), md("x" * 65, "b"), md("ok_id-1", "c")]),
        "same", warnings=['id "has space" is not a valid',
                          'is not a valid nbformat cell id'])

    put("hostile-names.ipynb",
        nb([md('x"><script>alert(1)</script>', "a"),
            {"cell_type": 'w" onmouseover="alert(1)', "id": "w",
             "metadata": {}, "source": "<b>"}]),
        "same", warnings=['cell 0: id "x"><script>', 'cell 1 is of type'])
    put("empty-cells.ipynb", nb([]), "same")
    put("crlf-and-empty-source.ipynb",
        nb([code("a", "x\r\ny\r\n"), md("b", ""), code("c", "\n\n")]),
        "same")

    # --- fixed: opened with warnings; a save changes what they say.
    old = rich()
    old["nbformat_minor"] = 4
    for c in old["cells"]:
        del c["id"]
    put("old-44.ipynb", old, "fixed", warnings=["nbformat 4.4"],
        repairs=[["nbformat_minor", 5]], minted=list(range(8)))

    noid = rich()
    del noid["cells"][2]["id"]
    put("no-id-45.ipynb", noid, "fixed", warnings=["cell 2 has no id"],
        repairs=[], minted=[2])

    dup = rich()
    dup["cells"][3]["id"] = "c-stream"
    put("dup-id.ipynb", dup, "fixed",
        warnings=['cell 3: id "c-stream" is also an earlier'],
        repairs=[], minted=[3])

    nsid = nb([md(5, "a"), md("", "b"), md("ok", "c")])
    put("id-not-string.ipynb", nsid, "fixed",
        warnings=["cell 0: id is a number", "cell 1: id is empty"],
        repairs=[], minted=[0, 1])

    miss = nb([code("a", "1"), code("b", "2"), md("c", "3"), md("d", "4")])
    del miss["cells"][0]["outputs"]
    del miss["cells"][1]["execution_count"]
    del miss["cells"][2]["source"]
    del miss["cells"][3]["metadata"]
    put("missing-structure.ipynb", miss, "fixed",
        warnings=["code cell 0 has no outputs",
                  "code cell 1 has no execution_count",
                  "cell 2 has no source", "cell 3 has no metadata"],
        repairs=[["cells", 0, "outputs", []],
                 ["cells", 1, "execution_count", None],
                 ["cells", 2, "source", ""],
                 ["cells", 3, "metadata", {}]], minted=[])

    nomd = nb([md("a", "x")])
    del nomd["metadata"]
    del nomd["nbformat_minor"]
    put("no-notebook-metadata.ipynb", nomd, "fixed",
        warnings=["no valid nbformat_minor", "the notebook has no metadata"],
        repairs=[["metadata", {}], ["nbformat_minor", 5]], minted=[])

    bad = nb([code("a", "1", [], "3"), code("b", "2", [], -1),
              code("c", "3", [{"output_type": "display_data",
                               "data": {"text/plain": "t"}, "metadata": {},
                               "transient": {"display_id": "d"}}])])
    put("bad-values.ipynb", bad, "fixed",
        warnings=["code cell 0: execution_count is a string",
                  "code cell 1: execution_count is a number",
                  '"transient" is runtime data'],
        repairs=[["cells", 0, "execution_count", None],
                 ["cells", 1, "execution_count", None],
                 ["cells", 2, "outputs", 0, "transient", "__delete__"]],
        minted=[])

    # --- refused: a message a person can act on; the file is untouched.
    text = dump(rich()).encode()
    cut = 8191
    assert text[cut - 10:cut].isascii() and b'"' not in text[cut - 3:cut]
    put("truncated.ipynb", text[:cut], "refused",
        error="the file ends at byte 8,191 in the middle of a string "
        "(truncated?)", nbformat=True)
    cut = text.index("漢".encode()) + 1
    put("truncated-utf8.ipynb", text[:cut], "refused",
        error="the file ends at byte %s in the middle of a string "
        "(truncated?)" % format(cut, ","), nbformat=True)
    text = text.decode()
    at = text.index('"metadata"')
    put("truncated-object.ipynb", text[:at], "refused",
        error="in the middle of an object key (truncated?)", nbformat=True)
    put("empty.ipynb", b"", "refused", error="the file is empty",
        nbformat=True)
    put("whitespace.ipynb", b" \n\n\t\n", "refused",
        error="the file holds only white space (5 bytes)", nbformat=True)
    lat = dump(nb([md("a", "caf\u00e9")])).encode("latin-1")
    put("latin1.ipynb", lat, "refused",
        error="not UTF-8: byte %s" % format(lat.index(b"\xe9"), ","),
        nbformat=True)
    put("bom.ipynb", b"\xef\xbb\xbf" + dump(nb([md("a", "x")])).encode(),
        "refused", error="byte order mark", nbformat=True)
    put("html.ipynb", b"<!DOCTYPE html>\n<html><body>404</body></html>\n",
        "refused", error="not JSON text: it starts with '<' at byte 0",
        nbformat=True)
    good = dump(nb([md("a", "x")]))
    put("trailing.ipynb", good + "garbage\n", "refused",
        error="something follows the notebook at byte %s" %
        format(len(good), ","),
        nbformat=True)
    syn = good.replace('"id": "a",', '"id": "a"', 1)
    at = syn.index('"', syn.index('"id": "a"') + 9)
    put("syntax-error.ipynb", syn, "refused",
        error="object value separator ',' expected: unexpected '\"' at "
        "byte %d (line %d," % (at, syn[:at].count("\n") + 1),
        nbformat=True)
    at = good.index('"x"')
    put("control-char.ipynb", good.replace('"x"', '"x\ty"'), "refused",
        error="a raw control character (0x09) in a string at byte %d" % (
            at + 2), nbformat=True)
    com = good.replace('"nbformat": 4,', '"nbformat": 4, /* four */', 1)
    put("comment.ipynb", com, "refused",
        error="unexpected '/' at byte %d" % com.index("/*"),
        nbformat=True)
    put("trailing-comma.ipynb", good.replace('"x"\n', '"x",\n', 1),
        "refused", error="not JSON: unexpected ']' at byte", nbformat=True)
    put("top-list.ipynb", "[]\n", "refused",
        error="the top level is a list", nbformat=True)
    put("no-cells.ipynb", '{"metadata": {}, "nbformat": 4, '
        '"nbformat_minor": 5}\n', "refused", error="no cells list",
        nbformat=True)
    put("cell-not-object.ipynb", dump(nb(["just text"])), "refused",
        error="cell 0 is a string, not an object", nbformat=True)
    nct = nb([md("a", "x"), md("b", "y")])
    del nct["cells"][1]["cell_type"]
    put("no-cell-type.ipynb", nct, "refused",
        error="cell 1 has no cell_type", nbformat=False)
    put("source-number.ipynb", nb([md("a", 5)]), "refused",
        error="cell 0: source is a number", nbformat=False)
    put("metadata-list.ipynb", nb([md("a", "x", metadata=[])]), "refused",
        error="cell 0: metadata is a list, not an object", nbformat=True)
    put("outputs-object.ipynb", nb([code("a", "x", outputs=[])]),
        "refused", error="code cell 0: outputs is an object", nbformat=True)
    # (outputs-object: patched below, json.dumps keeps it an object)
    oo = nb([code("a", "x")])
    oo["cells"][0]["outputs"] = {"not": "a list"}
    put("outputs-object.ipynb", oo, "refused",
        error="code cell 0: outputs is an object", nbformat=True)

    # --- real notebooks: nbclient's test files as Debian ships them
    # (BSD-3-clause, Jupyter Development Team; see nbclient/LICENSE).
    src = "/usr/lib/python3/dist-packages/nbclient/tests/files"
    os.makedirs(os.path.join(HERE, "nbclient"), exist_ok=True)
    for f in sorted(os.listdir(src)):
        if not f.endswith(".ipynb"):
            continue
        with open(os.path.join(src, f), "rb") as fp:
            data = fp.read()
        d = json.loads(data)
        name = "nbclient/" + f.replace(" ", "-")
        minor = d["nbformat_minor"]
        noid = [i for i, c in enumerate(d["cells"]) if "id" not in c]
        # What nbformat's schema refuses in it is said too (issue 35).
        ks = d.get("metadata", {}).get("kernelspec", {})
        schema = ["metadata.kernelspec has no %s" % k
                  for k in ("name", "display_name") if k not in ks]
        if minor < 5:
            put(name, data, "fixed",
                warnings=["nbformat 4.%d" % minor] + schema,
                repairs=[["nbformat_minor", 5]], minted=noid)
        else:
            put(name, data, "same")
    with open(os.path.join(HERE, "nbclient", "LICENSE"), "w") as f:
        f.write(NBCLIENT_LICENSE)

    with open(os.path.join(HERE, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


main()
