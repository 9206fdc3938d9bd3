#!/bin/sh
# SPDX-License-Identifier: ISC
# lazy.sh: no kernel before the first run (docs/decisions/018).  With a
# warm pool of one, 5 notebooks connected and read through runtimectl call
# (a real worker) leave the daemon with the pool's kernel and no other
# agent; running a cell in one of them gives that notebook one kernel
# (the pool's, adopted), and the others still have none.  interrupt_kernel
# of a notebook with no kernel is OK and starts none.
[ -z "${RUNTIMED_TEST_WATCHDOG:-}" ] &&
    RUNTIMED_TEST_WATCHDOG=1 exec timeout 240 "$0" "$@"
. "${srcdir:-.}/tests/ctl/lib.sh"
. "${srcdir:-.}/tests/lib/skip.sh"
have_kernel python3 || skip_missing "no python3 kernelspec"

mkdir "$T/nb"
dir=$(cd "$T/nb" && pwd -P)
/usr/bin/python3 - "$dir" <<'PY'
import nbformat, sys
for i in range(5):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = %d\nprint(x * 2)" % i)]
    nb.metadata["kernelspec"] = {"name": "python3",
        "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, "%s/n%d.ipynb" % (sys.argv[1], i))
PY
start_daemon --warm-pool 1

# Wait (max 60 s) for the pool's kernel to be ready.
i=0
until "$CTL" --json status | jq_py 'j["pool_ready"]' | grep -qx 1; do
	i=$((i + 1))
	[ $i -gt 600 ] && fail "the warm pool's kernel was not ready in 60 s"
	sleep 0.1
done

# Kernels the daemon runs: "pooled room" counts, from runtimed status.
kernels() {
	"$CTL" --json status | jq_py '"%d %d" % (sum(1 for k in j["kernel_list"] if k["pooled"]), sum(1 for k in j["kernel_list"] if not k["pooled"]))'
}

for n in 0 1 2 3 4; do
	"$CTL" --json call connect_notebook path="$dir/n$n.ipynb" \
	    >"$T/c$n.json" || fail "connect n$n: $(cat "$T/c$n.json")"
	jq_py 'j["kernel"]["state"]' <"$T/c$n.json" | grep -qx none ||
	    fail "connect n$n: kernel $(jq_py 'j["kernel"]' <"$T/c$n.json")"
	"$CTL" call inspect_notebook path="$dir/n$n.ipynb" view=all \
	    >"$T/i$n.out" || fail "inspect n$n: $(cat "$T/i$n.out")"
	grep -q "print(x \* 2)" "$T/i$n.out" || fail "inspect n$n: $(cat "$T/i$n.out")"
done
"$CTL" call interrupt_kernel path="$dir/n0.ipynb" >"$T/int.out" ||
    fail "interrupt with no kernel: $(cat "$T/int.out")"
sleep 0.5
[ "$(kernels)" = "1 0" ] ||
    fail "after 5 connects and reads: pooled/room kernels $(kernels)"
pooled=$("$CTL" --json status | jq_py 'j["kernel_list"][0]["kernel_id"]')
agents=$(ps -o pid= --ppid "$D" | wc -l)
[ "$agents" = 1 ] || fail "after 5 connects and reads: $agents agents"
ok "5 notebooks connected and read: the pool's kernel, no other agent"

"$CTL" --json call run_cells path="$dir/n3.ipynb" 'cell_ids=[0]' \
    wait_secs=30 >"$T/run.json" || fail "run: $(cat "$T/run.json")"
jq_py 'j["cells"][0]["outputs"][0]["text"]' <"$T/run.json" | grep -qx 6 ||
    fail "run: $(cat "$T/run.json")"
"$CTL" --json status | jq_py '[k["path"] for k in j["kernel_list"] if not k["pooled"]]' >"$T/k"
[ "$(cat "$T/k")" = "['$dir/n3.ipynb']" ] ||
    fail "after one run: room kernels $(cat "$T/k")"
"$CTL" --json status | jq_py '[k["kernel_id"] for k in j["kernel_list"] if not k["pooled"]]' >"$T/k"
[ "$(cat "$T/k")" = "['$pooled']" ] ||
    fail "the run did not take the pool's kernel $pooled: $(cat "$T/k")"
ok "one run: one kernel, for that notebook, from the warm pool"

"$CTL" stop >/dev/null || fail "stop"
wait $D
