#!/bin/sh
# testbed.sh: the NAPI testbed, two network namespaces joined by a veth pair
# whose every rx queue is a NAPI instance (see kernel/README.md for why each
# step is needed).
#
#   testbed.sh up     [NAME]         build the bed (idempotent); prints its facts
#   testbed.sh down   [NAME]         tear it down (a missing bed is fine)
#   testbed.sh status [NAME]         print the bed's facts; exit 1 if it is not up
#   testbed.sh exec   NAME srv|cli CMD...   run CMD inside one namespace
#   testbed.sh gc                    remove beds whose creating process is gone
#
# NAME defaults to gct-$$-RANDOM for up (printed, so it can be passed on) and
# to $TESTBED_NAME otherwise. The namespaces are NAME-srv and NAME-cli; the
# devices are srv0 (in NAME-srv, 10.213.0.1/30) and cli0 (in NAME-cli,
# 10.213.0.2/30). The addresses exist only inside the namespaces, so every bed
# can use the same ones. kernel/testbed (Go) builds the identical bed.
#
# Variants (environment of `up`; kernel/testbed's Variant does the same):
#   QUEUES=N          rx/tx queues per end (default 4; use the server's CPU count)
#   THREADED=1        threaded NAPI on both ends: receive work runs in a
#                     napi/DEV-ID kthread instead of the sender's softirq
#   SRV_CPUS=LIST     with THREADED=1, pin the server end's kthreads there
#   CLI_CPUS=LIST     likewise for the client end
# A plain bed runs the server's receive work on the client's (sender's) core;
# threaded and pinned, it runs on the server's core, as behind a NIC whose IRQ
# is affined to the server CPU. See kernel/README.md.
set -eu

QUEUES=${QUEUES:-4}
THREADED=${THREADED:-0}
SRV_CPUS=${SRV_CPUS:-}
CLI_CPUS=${CLI_CPUS:-}
SRV_DEV=srv0
CLI_DEV=cli0
SRV_IP=10.213.0.1
CLI_IP=10.213.0.2
PREFIX=30

die() { echo "testbed: $*" >&2; exit 1; }

need_tools() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces and veth creation)"
	command -v ip >/dev/null 2>&1 || die "ip (iproute2) not found"
	command -v ethtool >/dev/null 2>&1 || die "ethtool not found"
}

ns_exists() { [ -e "/var/run/netns/$1" ]; }

default_name() {
	if [ -n "${TESTBED_NAME:-}" ]; then
		echo "$TESTBED_NAME"
	else
		# $$ keeps parallel shells apart; the random part survives pid reuse.
		echo "gct-$$-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
	fi
}

check_name() {
	case "$1" in
	*[!A-Za-z0-9_.-]* | "" | -*) die "bad bed name '$1' (letters, digits, . _ - only)" ;;
	esac
	# ip netns names become file names; keep them well below NAME_MAX.
	[ "${#1}" -le 200 ] || die "bed name too long"
}

in_ns() { ns=$1; shift; ip netns exec "$ns" "$@"; }

# veth creates its per-queue NAPIs when GRO turns on (off-then-on forces the
# edge); TSO must be off on the sender, or veth hands TCP skbs past its NAPIs
# and sockets never see a NAPI ID. A bed already in that state is left alone:
# every toggle replaces the NAPIs (new IDs, per-NAPI settings reset).
napi_on() {
	feats=$(in_ns "$1" ethtool -k "$2")
	if echo "$feats" | grep -q '^generic-receive-offload: on' &&
		echo "$feats" | grep -q '^tcp-segmentation-offload: off'; then
		return 0
	fi
	in_ns "$1" ethtool -K "$2" gro off
	in_ns "$1" ethtool -K "$2" gro on
	in_ns "$1" ethtool -K "$2" tso off
}

bed_up() {
	name=$1
	srv="$name-srv" cli="$name-cli"
	ns_exists "$srv" || ip netns add "$srv"
	ns_exists "$cli" || ip netns add "$cli"
	ip -n "$srv" link set lo up
	ip -n "$cli" link set lo up
	if ! ip -n "$srv" link show "$SRV_DEV" >/dev/null 2>&1; then
		# A half-built bed (crash mid-up) may have left the peer behind.
		ip -n "$cli" link del "$CLI_DEV" 2>/dev/null || true
		ip link add name "$SRV_DEV" netns "$srv" \
			numtxqueues $QUEUES numrxqueues $QUEUES type veth \
			peer name "$CLI_DEV" netns "$cli" \
			numtxqueues $QUEUES numrxqueues $QUEUES
	fi
	ip -n "$srv" addr replace "$SRV_IP/$PREFIX" dev "$SRV_DEV"
	ip -n "$cli" addr replace "$CLI_IP/$PREFIX" dev "$CLI_DEV"
	ip -n "$srv" link set "$SRV_DEV" up
	ip -n "$cli" link set "$CLI_DEV" up
	napi_on "$srv" "$SRV_DEV"
	napi_on "$cli" "$CLI_DEV"
	have=$(in_ns "$srv" ls "/sys/class/net/$SRV_DEV/queues" | grep -c '^rx-' || true)
	[ "$have" = "$QUEUES" ] || die "bed $name exists with $have queues, not $QUEUES: take it down first"
	threading "$srv" "$SRV_DEV" "$SRV_CPUS"
	threading "$cli" "$CLI_DEV" "$CLI_CPUS"
}

# kthreads_named DEV: "pid comm" of every napi/DEV-* kthread. Every bed
# names its devices srv0/cli0, so a name alone does not say which bed a
# kthread serves; threading() pins only the kthreads its own write created.
# (kernel/testbed asks netdev netlink for the pids instead.)
kthreads_named() {
	for f in /proc/[0-9]*/comm; do
		c=$(cat "$f" 2>/dev/null) || continue
		case "$c" in "napi/$1-"*) p=${f#/proc/}; echo "${p%/comm} $c" ;; esac
	done
}

# threading NS DEV CPUS: set threaded per $THREADED; pin the new kthreads.
# Threading is switched off first so the kthreads are always fresh ones
# (the toggle keeps the NAPIs and their IDs; only the threads change).
threading() {
	ns=$1 dev=$2 cpus=$3
	in_ns "$ns" sh -c "echo 0 > /sys/class/net/$dev/threaded"
	[ "$THREADED" = 1 ] || return 0
	before=$(kthreads_named "$dev")
	in_ns "$ns" sh -c "echo 1 > /sys/class/net/$dev/threaded"
	kthreads_named "$dev" | while read -r pid comm; do
		echo "$before" | grep -q "^$pid " && continue
		if [ -n "$cpus" ]; then
			taskset -pc "$cpus" "$pid" >/dev/null
			echo "kthread $comm pid=$pid cpus=$cpus"
		else
			echo "kthread $comm pid=$pid cpus=any"
		fi
	done
}

bed_down() {
	name=$1
	# Deleting one namespace destroys its veth end and with it the peer.
	for ns in "$name-srv" "$name-cli"; do
		if ns_exists "$ns"; then
			ip netns del "$ns"
		fi
	done
}

bed_status() {
	name=$1
	ns_exists "$name-srv" && ns_exists "$name-cli" || { echo "bed $name: down"; return 1; }
	ip -n "$name-srv" link show "$SRV_DEV" >/dev/null 2>&1 || { echo "bed $name: half up (no $SRV_DEV)"; return 1; }
	for side in srv cli; do
		if [ $side = srv ]; then dev=$SRV_DEV ip=$SRV_IP; else dev=$CLI_DEV ip=$CLI_IP; fi
		ns="$name-$side"
		idx=$(in_ns "$ns" cat "/sys/class/net/$dev/ifindex")
		rxq=$(in_ns "$ns" ls "/sys/class/net/$dev/queues" | grep -c '^rx-' || true)
		gro=$(in_ns "$ns" ethtool -k "$dev" | sed -n 's/^generic-receive-offload: //p')
		tso=$(in_ns "$ns" ethtool -k "$dev" | sed -n 's/^tcp-segmentation-offload: //p')
		thr=$(in_ns "$ns" cat "/sys/class/net/$dev/threaded" 2>/dev/null || echo "?")
		echo "$side ns=$ns dev=$dev ifindex=$idx ip=$ip rxqueues=$rxq gro=$gro tso=$tso threaded=$thr"
	done
}

# gc removes beds named gct-PID-* whose PID no longer runs: the leftovers of
# runs that were killed before their teardown.
bed_gc() {
	[ -d /var/run/netns ] || return 0
	for f in /var/run/netns/gct-*-srv /var/run/netns/gct-*-cli; do
		[ -e "$f" ] || continue
		ns=${f##*/}
		pid=$(echo "$ns" | sed -n 's/^gct-\([0-9][0-9]*\)-.*/\1/p')
		[ -n "$pid" ] || continue
		if [ ! -d "/proc/$pid" ]; then
			echo "testbed: removing stale $ns (pid $pid gone)"
			ip netns del "$ns" || true
		fi
	done
}

cmd=${1:-}
[ -n "$cmd" ] || die "usage: testbed.sh up|down|status|exec|gc [NAME] (see the header)"
shift
case "$cmd" in
up)
	need_tools
	name=${1:-$(default_name)}
	check_name "$name"
	if ! bed_up "$name"; then
		bed_down "$name"
		die "up $name failed; torn down"
	fi
	bed_status "$name"
	echo "name=$name"
	;;
down)
	need_tools
	name=${1:-${TESTBED_NAME:-}}
	[ -n "$name" ] || die "down needs NAME (or TESTBED_NAME)"
	check_name "$name"
	bed_down "$name"
	;;
status)
	name=${1:-${TESTBED_NAME:-}}
	[ -n "$name" ] || die "status needs NAME (or TESTBED_NAME)"
	check_name "$name"
	bed_status "$name"
	;;
exec)
	need_tools
	[ $# -ge 3 ] || die "usage: testbed.sh exec NAME srv|cli CMD..."
	name=$1 side=$2
	shift 2
	check_name "$name"
	case "$side" in
	srv | cli) ;;
	*) die "exec side must be srv or cli, not '$side'" ;;
	esac
	ns_exists "$name-$side" || die "bed $name is not up"
	exec ip netns exec "$name-$side" "$@"
	;;
gc)
	need_tools
	bed_gc
	;;
*)
	die "unknown command '$cmd' (up|down|status|exec|gc)"
	;;
esac
