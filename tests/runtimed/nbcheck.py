# SPDX-License-Identifier: ISC
"""Check a notebook runtimed saved against the file it was loaded from.

usage: nbcheck.py SAVED ORIGINAL
SAVED must validate with nbformat, be nbformat 4.5 with unique cell ids
and no "transient", and hold exactly ORIGINAL's content otherwise.
"""
import json
import sys

import nbformat

saved_path, orig_path = sys.argv[1], sys.argv[2]
with open(saved_path, encoding="utf-8") as f:
    raw = f.read()
assert '"transient"' not in raw, "transient saved"
saved = nbformat.reads(raw, as_version=4)
nbformat.validate(saved)
assert saved.nbformat == 4 and saved.nbformat_minor == 5, saved.nbformat_minor
ids = [c.id for c in saved.cells]
assert len(set(ids)) == len(ids) and all(ids), ids
orig = nbformat.read(orig_path, as_version=4)
for c in saved.cells:
    del c["id"]
for c in orig.cells:
    c.pop("id", None)
orig.nbformat_minor = 5
a = json.dumps(saved, sort_keys=True)
b = json.dumps(orig, sort_keys=True)
assert a == b, "content differs:\n%s\n%s" % (a[:2000], b[:2000])
