#!/bin/sh
# SPDX-License-Identifier: ISC
# slowstdin.sh: a kernel whose stdin socket is not yet connected when it
# answers kernel_info (issue 36, item 9).  The agent called such a
# kernel ready, a cell calling input() at once asked on a socket the
# kernel's ROUTER did not know yet, the question was dropped, and the run
# stayed "running" for good with the kernel waiting: bigprompt.sh saw it
# one time in three under load.  The agent now calls a kernel ready only
# once its stdin socket has connected (a ZeroMQ socket monitor), so the
# run asks.  tests/kernels/slowstdin.py holds stdin back for 4 s, on ipc
# (the agent's default, decision 060) and on tcp.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 180 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null ||
    skip_missing "no ipykernel"
export RUNTIMED_AUTOSAVE=0

here=$(cd "${srcdir:-.}" && pwd)
for tr in ipc tcp; do
	mkdir -p "$T/jupyter/kernels/slowstdin-$tr"
	cat >"$T/jupyter/kernels/slowstdin-$tr/kernel.json" <<JSON
{"argv": ["/usr/bin/python3", "$here/tests/kernels/slowstdin.py", "4", "$tr",
  "{connection_file}"],
 "display_name": "stdin late", "language": "python"}
JSON
done
export JUPYTER_PATH=$T/jupyter
start_daemon --warm-pool 0
mkdir -m 700 "$T/nb"
for tr in ipc tcp; do
nb=$T/nb/$tr.ipynb
/usr/bin/python3 - "$nb" "slowstdin-$tr" <<'PY'
import nbformat, sys
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(
    'name = input("name? ")\nprint("hello", name)')]
nb.metadata["kernelspec"] = {"name": sys.argv[2],
    "display_name": "stdin late", "language": "python"}
nbformat.write(nb, sys.argv[1])
PY
"$CTL" --json call run_cells path="$nb" all=true wait_secs=20 \
    >"$T/run.json" 2>&1 || fail "$tr: run_cells: $(head -c 2000 "$T/run.json")"
grep -q '"status":"input_required"' "$T/run.json" ||
    fail "$tr: the run did not ask for input: $(head -c 2000 "$T/run.json"); $(grep -i 'kernel\|input' "$T/daemon.log" | tail -20)"
conn=$(ls -t "$RUNTIMED_STATE_DIR"/kernels/*/kernel-*.json | head -1)
grep -q "\"transport\": *\"$tr\"" "$conn" || fail "$tr: the kernel is not on $tr: $(cat "$conn")"
eid=$(jq_py 'j["execution_id"]' <"$T/run.json")
ok "$tr: a kernel whose stdin connects 4 s late: the run asks for input"
out=$("$CTL" call send_input path="$nb" execution_id="$eid" value=ann 2>&1) ||
    fail "$tr: send_input: $out"
"$CTL" call get_results path="$nb" execution_id="$eid" timeout_secs=20 \
    >"$T/res" 2>&1 || fail "$tr: get_results: $(head -c 2000 "$T/res")"
grep -q "hello ann" "$T/res" ||
    fail "$tr: the answer did not reach the cell: $(head -c 2000 "$T/res")"
ok "$tr: send_input answered it"
done
