#!/bin/sh
# napitrace.sh: run one command and count, while it runs, who polled which
# NAPI and why; the counters behind bench/README.md's "Why suspend20 loses".
#
#   bench/napitrace.sh [-d DEV] -- CMD...
#
# As root. It uses its own tracefs instance (mounting tracefs if needed), so
# it does not touch the global trace buffer others may use, and removes the
# instance afterwards. Prints, for the time CMD ran:
#
#   napi_poll  DEV CONTEXT CPU COMM  polls  packets  empty
#     CONTEXT is "softirq" (NET_RX: raised by veth's sender, a deferral
#     timer, or an IRQ) or "task" (process context: epoll busy polling by
#     the application, or a threaded-NAPI kthread). empty = polls that found
#     no packet (work 0): the cost of polling with nothing to do.
#   napi_watchdog CPU fires: the gro-flush-timeout / deferral hrtimer
#     (napi_watchdog) expiring, i.e. how often a deferred NAPI was picked up
#     by the timer rather than by the application.
#   NET_RX per CPU (/proc/softirqs), softnet processed/time_squeeze per CPU
#     (/proc/net/softnet_stat), TcpExt:BusyPollRxPackets of the namespace
#     napitrace runs in (run it under `ip netns exec NS` for a bed's server).
#
# DEV filters napi_poll by device name (default: every device). Every bed
# names its devices srv0/cli0, so run one bed at a time when reading these.
set -eu

dev=""
while [ $# -gt 0 ]; do
	case "$1" in
	-d) dev=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: napitrace.sh [-d DEV] -- CMD..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "napitrace: needs root (tracefs)" >&2; exit 1; }

T=/sys/kernel/tracing
mountpoint -q "$T" 2>/dev/null || mount -t tracefs nodev "$T"
inst="$T/instances/napitrace-$$"
mkdir "$inst"
cleanup() { echo 0 >"$inst/tracing_on" 2>/dev/null || true; rmdir "$inst" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
# Binary events are ~40 bytes; 64 MiB per CPU holds over a million polls.
echo 65536 >"$inst/buffer_size_kb"
[ -z "$dev" ] || echo "dev_name == \"$dev\"" >"$inst/events/napi/napi_poll/filter"
echo 1 >"$inst/events/napi/napi_poll/enable"
wd=$(awk '$3 == "napi_watchdog" { print $1; exit }' /proc/kallsyms)
if [ -n "$wd" ] && [ "$wd" != 0000000000000000 ]; then
	echo "function == 0x$wd" >"$inst/events/timer/hrtimer_expire_entry/filter"
	echo 1 >"$inst/events/timer/hrtimer_expire_entry/enable"
fi

snap() { # snap FILE: "key value" lines of the counters reported as deltas
	{
		awk '/NET_RX/ { for (i = 2; i <= NF; i++) print "netrx_cpu" i - 2, $i }' /proc/softirqs
		# softnet_stat: a line per CPU, hex: processed, dropped, time_squeeze, ...
		cpu=0
		while read -r processed _ squeeze _; do
			echo "softnet_processed_cpu$cpu $(printf %d "0x$processed")"
			echo "softnet_squeeze_cpu$cpu $(printf %d "0x$squeeze")"
			cpu=$((cpu + 1))
		done </proc/net/softnet_stat
		awk '/^TcpExt:/ { if (!h) { split($0, n); h = 1 } else { for (i = 2; i <= NF; i++) if (n[i] == "BusyPollRxPackets") print "BusyPollRxPackets", $i } }' \
			/proc/thread-self/net/netstat
	} >"$1"
}
before=$(mktemp) after=$(mktemp)
trap 'cleanup; rm -f "$before" "$after"' EXIT INT TERM
snap "$before"
echo 1 >"$inst/tracing_on"
start=$(date +%s.%N)
rc=0
"$@" || rc=$?
echo 0 >"$inst/tracing_on"
end=$(date +%s.%N)
snap "$after"

echo "napitrace: $(echo "$end $start" | awk '{ printf "%.2f", $1 - $2 }') s, command exit $rc"
# Trace lines: "COMM-PID [CPU] FLAGS TS: napi_poll: ... device DEV work N budget B".
# The flags' third character is 's' in softirq, 'H' in hardirq+softirq.
awk '
/ napi_poll: / {
	split($0, a, "napi_poll:"); head = a[1]
	match(head, /\[[0-9]+\]/); cpu = substr(head, RSTART + 1, RLENGTH - 2)
	rest = substr(head, RSTART + RLENGTH); split(rest, f, " "); flags = f[1]
	comm = substr(head, 1, RSTART - 1); sub(/^ +/, "", comm); sub(/-[0-9]+ *$/, "", comm)
	if (comm ~ /^napi\//) comm = "napi-kthread"
	ctx = (substr(flags, 3, 1) ~ /[sH]/) ? "softirq" : "task"
	n = split(a[2], w, " "); d = w[n - 4]; work = w[n - 2]
	k = d " " ctx " " cpu " " comm
	polls[k]++; pkts[k] += work; if (work == 0) empty[k]++
}
/ hrtimer_expire_entry: / {
	match($0, /\[[0-9]+\]/); wdcpu[substr($0, RSTART + 1, RLENGTH - 2)]++
}
END {
	printf "%-10s %-6s %-8s %-4s %-16s %9s %9s %9s\n", "napi_poll", "dev", "context", "cpu", "comm", "polls", "packets", "empty"
	for (k in polls) { split(k, p, " "); printf "%-10s %-6s %-8s %-4s %-16s %9d %9d %9d\n", "napi_poll", p[1], p[2], p[3], p[4], polls[k], pkts[k], empty[k] }
	for (c in wdcpu) printf "napi_watchdog cpu %s fires %d\n", c, wdcpu[c]
}' "$inst/trace" | sort
lost=$(awk '/overrun:/ { s += $2 } END { print s + 0 }' "$inst"/per_cpu/cpu*/stats)
[ "$lost" = 0 ] || echo "napitrace: $lost events lost (buffer overrun): counts are low"
awk 'NR == FNR { a[$1] = $2; next } { printf "%-26s +%d\n", $1, $2 - a[$1] }' "$before" "$after"
exit $rc
