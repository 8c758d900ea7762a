#!/bin/sh
# pollcounters.sh: one closed-loop run of gocached in one poll mode on a
# 1-queue testbed, and one line of per-request counters that say how the
# requests' packets reached the server (the numbers behind bench/README.md's
# "Why suspend20 loses here").
#
#   bench/pollcounters.sh MODE plain|threaded CONNS DEPTH [SECONDS]
#
# As root, from the module root. GOCACHED and MCLOAD name the binaries
# (default: built into a temporary directory); RATE=N offers N requests/s
# open-loop instead of the closed loop; MCLOAD_ARGS adds load options
# (e.g. "--multiget 32"), SERVER_ARGS server options (e.g. "--busy-poll-usecs
# 50"). The server runs on CPU 1,
# mcload on CPU 0, in a bed of its own that is deleted afterwards.
#
# Per request: watchdog = deferral-timer (napi_watchdog) expiries;
# busypoll = packets delivered by busy polling (BusyPollRxPackets);
# softirq/kthread polls and the packets they delivered; the reactor's
# epoll_waits, empty_waits, events per wait and wait_us (stats reactors);
# CPU per request, exact: the server core's busy time (wall clock less idle,
# iowait and steal; this kernel's tick-sampled busy counters miss the short
# bursts of a core that sleeps between requests), the server's threads and
# the server NAPI kthread (schedstat run time), and the kthread's wake-ups
# (schedstat timeslices). Tracing adds a few hundred ns per traced poll, and
# the CPU window also spans napitrace's setup and teardown (seconds of an
# idle server), so per-request CPU is a little high at low rates; the
# wake-up counts and the cost per wake-up are not affected.
set -eu
[ $# -ge 4 ] || { echo "usage: pollcounters.sh MODE plain|threaded CONNS DEPTH [SECONDS]" >&2; exit 2; }
mode=$1 variant=$2 conns=$3 depth=$4 secs=${5:-3}
case "$variant" in plain) thr=0 ;; threaded) thr=1 ;; *) echo "variant: plain or threaded" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
name=gct-$$-pc
gp=""
cleanup() {
	[ -z "$gp" ] || kill "$gp" 2>/dev/null || true
	sleep 0.3
	kernel/testbed.sh down "$name" || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
if [ -z "${GOCACHED:-}" ]; then GOCACHED=$tmp/gocached; go build -o "$GOCACHED" ./cmd/gocached; fi
if [ -z "${MCLOAD:-}" ]; then MCLOAD=$tmp/mcload; go build -o "$MCLOAD" ./bench/cmd/mcload; fi
QUEUES=1 THREADED=$thr SRV_CPUS=1 CLI_CPUS=0 kernel/testbed.sh up "$name" >/dev/null
ip netns exec "$name-srv" taskset -c 1 "$GOCACHED" -l 10.213.0.1 -p 11211 -t auto -m 256 --poll-mode "$mode" ${SERVER_ARGS:-} 2>"$tmp/server.log" &
gp=$!
sleep 0.7
ip netns exec "$name-cli" taskset -c 0 "$MCLOAD" -s 10.213.0.1:11211 -r 20000 --loadonly --quiet >/dev/null
stats() { # the reactor counters, as name=value
	ip netns exec "$name-cli" python3 -c '
import socket
s = socket.create_connection(("10.213.0.1", 11211)); s.sendall(b"stats reactors\r\n"); d = b""
while not d.endswith(b"END\r\n"): d += s.recv(65536)
print(" ".join(l.split()[1].split(":")[2] + "=" + l.split()[2] for l in d.decode().splitlines()
    if l.startswith("STAT") and l.split()[1].split(":")[2] in ("epoll_waits", "events", "empty_waits", "wait_us")))'
}
# The server end's NAPI kthreads (threaded beds): every bed names its
# devices srv0/cli0, so like napitrace this needs one bed at a time.
kpids=$(ps -eo pid=,comm= | awk '$2 ~ /^napi\/srv0-/ { print $1 }')
run() { # the server's threads and the server NAPI kthreads: run ns and timeslices
	r=0 n=0
	for f in /proc/$gp/task/*/schedstat; do
		set -- $(cat "$f" 2>/dev/null || echo 0 0 0); r=$((r + $1))
	done
	k=0
	for p in $kpids; do set -- $(cat /proc/$p/schedstat); k=$((k + $1)); n=$((n + $3)); done
	echo "$r $k $n"
}
s0=$(stats)
c0=$(head -1 /proc/stat)
k0=$(run); w0=$(date +%s%N); p0=$(sed -n 3p /proc/stat) # cpu1, the server's
ip netns exec "$name-srv" bench/napitrace.sh -d srv0 -- ip netns exec "$name-cli" taskset -c 0 "$MCLOAD" \
	-s 10.213.0.1:11211 -r 20000 --noload -q "${RATE:-0}" -c "$conns" -d "$depth" -t "$secs" -w 0 ${MCLOAD_ARGS:-} --json --quiet >"$tmp/trace" 2>&1
c1=$(head -1 /proc/stat)
k1=$(run); w1=$(date +%s%N); p1=$(sed -n 3p /proc/stat)
s1=$(stats)
python3 - "$mode" "$variant" "$conns" "$depth" "$s0" "$s1" "$c0" "$c1" "$tmp/trace" "${MCLOAD_ARGS:-}${SERVER_ARGS:+ server $SERVER_ARGS}${RATE:+ rate $RATE/s}" \
	"$k0" "$k1" "$w0" "$w1" "$p0" "$p1" <<'PY'
import json, re, sys
mode, variant, conns, depth, s0, s1, c0, c1, path = sys.argv[1:10]
k0, k1 = [list(map(int, x.split())) for x in sys.argv[11:13]]
wall = int(sys.argv[14]) - int(sys.argv[13])
p0, p1 = [list(map(int, x.split()[1:])) for x in sys.argv[15:17]]
t = open(path).read()
i, j = t.index("{"), t.index("\nnapitrace:")
r = json.loads(t[i:j]); q = r["requests"]; body = t[j:]
kv = lambda s: {a: int(b) for a, b in (x.split("=") for x in s.split())}
a, b = kv(s0), kv(s1); d = {k: b[k] - a.get(k, 0) for k in b}
wd = sum(int(m) for m in re.findall(r"napi_watchdog cpu \d+ fires (\d+)", body))
def polls(ctx, comm):
    n = p = e = 0
    for l in body.splitlines():
        f = l.split()
        if len(f) == 8 and f[0] == "napi_poll" and f[2] == ctx and f[4].startswith(comm):
            n += int(f[5]); p += int(f[6]); e += int(f[7])
    return n, p, e
bp = int(re.search(r"BusyPollRxPackets +\+(\d+)", body).group(1))
an, ap, ae = polls("task", "gocached"); kn, kp, _ = polls("task", "napi-kthread"); sn, sp, _ = polls("softirq", "")
st = [y - x for x, y in zip(map(int, c0.split()[1:]), map(int, c1.split()[1:]))]
w = max(d.get("epoll_waits", 1), 1)
print(f"{mode} {variant} {conns}x{depth}{' ' + sys.argv[10] if len(sys.argv) > 10 and sys.argv[10] else ''}: qps {r['qps']:.0f} p50 {r['latency_us']['p50']:.0f}us p99 {r['latency_us']['p99']:.0f}us | "
      f"per request: watchdog {wd/q:.2f}, busypoll pkts {bp/q:.2f}, softirq polls {sn/q:.2f} (pkts {sp/q:.2f}), "
      f"kthread polls {kn/q:.2f} (pkts {kp/q:.2f}), app polls {an/q:.2f} ({ae/max(an,1):.0%} empty), "
      f"epoll_waits {d.get('epoll_waits',0)/q:.2f}, empty_waits {d.get('empty_waits',0)/q:.2f}, "
      f"wait_us {d.get('wait_us',0)/q:.1f} | events/wait {d.get('events',0)/w:.1f} | steal {100*st[7]/sum(st):.1f}%")
pd = [(y - x) * 10_000_000 for x, y in zip(p0, p1)]  # USER_HZ 100: ticks to ns
core = max(wall - pd[3] - pd[4] - pd[7], 0)
print(f"  exact CPU per request: server core {core/q:.0f} ns, "
      f"server threads {(k1[0]-k0[0])/q:.0f} ns, server NAPI kthreads {(k1[1]-k0[1])/q:.0f} ns in "
      f"{(k1[2]-k0[2])/q:.2f} wake-ups ({(k1[1]-k0[1])/max(k1[2]-k0[2],1)/1000:.1f} us each)")
PY
