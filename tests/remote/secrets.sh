#!/bin/sh
# SPDX-License-Identifier: ISC
# secrets.sh: redaction on a Jupyter Server's kernel (decision 064).
# runtimed-agent-remote cannot read the server kernel's environment, so
# what it redacts is the credential shapes, the names
# RUNTIMED_SECRET_NAMES lists (with its own values) and the domain's
# token; a secret-looking name that is not listed is not redacted there,
# which this test asserts too, so the limit stays what docs/remote.md
# says.  The values must be in no answer, the server's saved file or the
# state directory.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 300 "$0" "$@"
. "${srcdir:-.}/tests/remote/lib.sh"

rnd() {
	$PY -c 'import secrets, string
a = string.ascii_letters + string.digits
print("".join(secrets.choice(a) for _ in range(int(__import__("sys").argv[1]))))' "$1"
}
# The server and its kernels inherit these, and so does the daemon.
export CUSTOM_THING="ct-$(rnd 24)" UNLISTED_SECRET="us-$(rnd 24)"
export SEED_GHP="$(rnd 36)" TOKEN_COPY="$TOKEN"
export RUNTIMED_SECRET_NAMES=CUSTOM_THING
export RUNTIMED_AUTOSAVE=0
$PY - "$SROOT/s.ipynb" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    'import os\nE = os.environ\nprint("listed", E["CUSTOM_THING"])\n'
    'print("shape", "ghp_" + E["SEED_GHP"])\n'
    'print("token", E["TOKEN_COPY"])\n'
    'print("unlisted", E["UNLISTED_SECRET"])')]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
    "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
start_daemon --warm-pool 0
start_server

$PY - "$top_builddir" "$T" "${srcdir:-.}" <<'PY' || fail "the remote run"
import json, os, sys
sys.dont_write_bytecode = True
builddir, tmp, srcdir = sys.argv[1:4]
sys.path.insert(0, os.path.join(srcdir, "tests", "notebooks"))
from mcp import Worker
w = Worker(builddir, dict(os.environ), os.path.join(tmp, "worker.log"))
sc, text, err = w.call("connect_notebook", path="s.ipynb", domain="js")
assert not err, sc
h = sc["notebook_handle"]
sc, text, err = w.call("run_cells", notebook_handle=h, all=True,
    wait_secs=50, timeout=120)
assert not err and sc["status"] == "done", (sc, text)
sc2, text2, err = w.call("get_results", notebook_handle=h,
    execution_id=sc["execution_id"], full_output=True)
assert not err, sc2
sc3, _, err = w.call("save_notebook", notebook_handle=h)
assert not err, sc3
with open(os.path.join(tmp, "answers.txt"), "w") as f:
    f.write(json.dumps([sc, sc2]) + text + text2)
for m in ("listed [redacted: CUSTOM_THING]", "shape [redacted: GitHub token]",
    "token [redacted: Jupyter Server token]",
    "unlisted " + os.environ["UNLISTED_SECRET"]):
    assert m in text2, (m, text2)
PY
ok "a server's kernel: listed names, shapes and the domain's token redacted; an unlisted name shown, as documented"
for v in "$CUSTOM_THING" "ghp_$SEED_GHP" "$TOKEN"; do
	if grep -rlaF -e "$v" "$T/answers.txt" "$SROOT/s.ipynb" \
	    "$RUNTIMED_STATE_DIR" "$T/daemon.log" >"$T/where" 2>/dev/null; then
		fail "a secret (${#v} bytes) is in: $(cat "$T/where")"
	fi
done
ok "no redacted value in the answers, the server's saved file or the state directory"
