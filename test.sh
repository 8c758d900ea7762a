#!/usr/bin/env bash
# test.sh: gocached's one test entry point (CI runs it through .ci/run).
#
# On a fresh Debian machine, as root, it first installs the Debian packages
# the tests use when any is missing (and stops the memcached service the
# package starts), then runs: gofmt check, go vet, darwin and FreeBSD builds,
# the build of the reference memcached (1.6.45, from Debian's source
# package, into the test cache), and the test stages side by side (at most
# STAGE_JOBS at once): go test -race over every package but integration,
# the integration package once per area (integration/tests-in lists them),
# memcached 1.6.45's t/ suite against every engine and 1.6.18's against the
# default one, and every fuzz target for a short time. The unit packages
# run under the race detector; the integration package, which drives
# servers in separate processes, without it (see compile_tests). Each
# stage's time is printed with its log and in the summary.
#
# Environment:
#   STAGE_JOBS      test stages run at once (default 3: most stages wait
#                   more than they compute)
#   FUZZTIME        time per fuzz target (default: 20s, shortened to fit
#                   FUZZ_BUDGET when there are many targets; 0 skips fuzzing)
#   FUZZ_BUDGET     wall-clock seconds for all fuzzing when FUZZTIME is unset
#                   (default 60; each target gets at least 5 s)
#   FUZZ_JOBS       fuzz targets run at once, one worker each (default: nproc)
#   TEST_TIMEOUT    go test -timeout per run (default 10m: a hang guard; no
#                   run comes near it)
#   GOCACHED_TSUITE_ENGINES  engines memcached 1.6.45's t/ suite runs
#                   against (default: default,go,uring,tls)
#   TSUITE_1618_ENGINES  engines memcached 1.6.18's t/ suite runs against
#                   (default: default; empty: not run)
#   GOCACHED_REQUIRE_TESTBED=1  missing tools/root fail tests instead of skipping
set -uo pipefail

cd "$(dirname "$0")"
FUZZTIME=${FUZZTIME:-}
FUZZ_BUDGET=${FUZZ_BUDGET:-60}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
TEST_TIMEOUT=${TEST_TIMEOUT:-10m}
PACKAGES=(iproute2 ethtool memcached python3-pymemcache libmemcached-tools
	ruby ruby-dalli python3-pylibmc php-cli php-memcached nutcracker sasl2-bin
	php-memcache libcache-memcached-fast-perl git scons libevent-dev gengetopt g++
	gcc perl xz-utils libio-socket-ssl-perl make pkg-config libsasl2-dev libssl-dev)

declare -a RESULTS=()
FAILED=0
record() { # record NAME STATUS
	RESULTS+=("$(printf '%-6s %s' "$2" "$1")")
	[ "$2" = PASS ] || [ "$2" = SKIP ] || FAILED=1
}
summary() {
	echo
	echo "==== test.sh summary ===="
	for r in "${RESULTS[@]}"; do echo "  $r"; done
	if [ "$FAILED" -eq 0 ]; then echo "ALL PASSED"; else echo "FAILED"; fi
}
step() { # step NAME CMD...: run, record, keep going
	local name=$1
	shift
	echo
	echo "==== $name: $*"
	local start=$SECONDS
	if "$@"; then
		record "$name ($((SECONDS - start))s)" PASS
	else
		record "$name ($((SECONDS - start))s)" FAIL
	fi
}

# --- Debian packages --------------------------------------------------------
have_pkg_tools() {
	command -v ip >/dev/null && command -v ethtool >/dev/null &&
		command -v memcached >/dev/null && command -v memccapable >/dev/null &&
		command -v memcslap >/dev/null && command -v memccp >/dev/null &&
		command -v nutcracker >/dev/null && command -v saslpasswd2 >/dev/null &&
		/usr/bin/python3 -c 'import pymemcache.client.base' 2>/dev/null &&
		/usr/bin/python3 -c 'import pylibmc' 2>/dev/null &&
		command -v ruby >/dev/null && ruby -e 'require "dalli"' 2>/dev/null &&
		command -v php >/dev/null && php -r 'exit(class_exists("Memcached") ? 0 : 1);' 2>/dev/null &&
		php -r 'exit(class_exists("Memcache") ? 0 : 1);' 2>/dev/null &&
		perl -MCache::Memcached::Fast -e 1 2>/dev/null &&
		command -v git >/dev/null && command -v scons >/dev/null && command -v gengetopt >/dev/null &&
		command -v g++ >/dev/null && [ -e /usr/include/event2/event.h ] &&
		command -v gcc >/dev/null && command -v xz >/dev/null && perl -MTest::More -e 1 2>/dev/null &&
		perl -MIO::Socket::SSL -e 1 2>/dev/null &&
		command -v make >/dev/null && command -v pkg-config >/dev/null &&
		[ -e /usr/include/sasl/sasl.h ] && [ -e /usr/include/openssl/ssl.h ]
}

stop_memcached_service() {
	# Debian's packages start memcached (11211) and nutcracker (22121,
	# 22222); the tests start their own.
	for svc in memcached nutcracker; do
		if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
			systemctl stop "$svc"
		elif command -v service >/dev/null && service "$svc" status >/dev/null 2>&1; then
			service "$svc" stop
		fi
	done
}

if ! have_pkg_tools; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "test.sh: missing test dependencies; as root run:" >&2
		echo "  apt-get update && apt-get install -y ${PACKAGES[*]}" >&2
		exit 1
	fi
	echo "==== installing ${PACKAGES[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get update || ! apt-get install -y "${PACKAGES[@]}"; then
		echo "test.sh: apt-get install failed" >&2
		exit 1
	fi
	stop_memcached_service
	if ! have_pkg_tools; then
		echo "test.sh: packages installed but tools still missing" >&2
		exit 1
	fi
fi

# --- Go toolchain -----------------------------------------------------------
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
if ! command -v go >/dev/null; then
	echo "test.sh: go not found (install Go 1.26 into /usr/local/go)" >&2
	exit 1
fi
go version

# --- checks -----------------------------------------------------------------
gofmt_check() {
	local out
	out=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*') 2>&1)
	[ -z "$out" ] && return 0
	echo "gofmt needed on:"
	echo "$out"
	return 1
}
step "gofmt" gofmt_check
step "go vet" go vet ./...
# The server builds for macOS and FreeBSD too (the portable engine); a
# Linux-only field or type in a shared file breaks that without any test
# noticing (FreeBSD's rlimit fields are int64, Linux's uint64).
cross_builds() {
	local os
	for os in darwin freebsd; do
		env GOOS=$os CGO_ENABLED=0 go build -o /dev/null ./cmd/gocached || return 1
	done
}
step "darwin and freebsd builds" cross_builds
# --- the test stages, run side by side ---------------------------------------
# Much of the suite waits (servers starting, expiry, memcached's t/ files
# sleeping), so on a 2-CPU machine stages overlap: at most STAGE_JOBS run at
# once, in order of priority: memcached's t/ suite over TLS (the longest)
# and internal/protocol first, then the t/ suite on each engine (long, and
# waiting half its time), then the other CPU-bound stages as slots free,
# the short ones last. Of the orders tried on a quiet 2-CPU machine this
# one was the quickest: four stages at once, or the CPU-bound stages all
# first, made them stretch each other and pushed the waiting t/ stages to
# the end with nothing to overlap. Each stage writes its own log, printed
# whole when it ends with its wall-clock and CPU seconds. Every stage is its
# own `go test` run with its own timeout, so no single run carries the suite.
declare -a STAGE_NAMES=() STAGE_CMDS=() STAGE_PRIO=()
stage() { # stage PRIORITY NAME CMD...: queue a stage (higher starts first)
	STAGE_PRIO+=("$1")
	STAGE_NAMES+=("$2")
	shift 2
	STAGE_CMDS+=("$(printf '%q ' "$@")")
}
# cpu_seconds: user+system seconds from the output of `times` on stdin (its
# second line, the shell's finished children: "0m1.250s 0m0.310s"). `times`
# itself must run in the stage's own shell: a forked one starts at zero.
cpu_seconds() {
	sed -n 2p | awk '{
		t = 0
		for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
		printf "%d", t + 0.5
	}'
}
run_stages() {
	local dir i pid name rc secs cpu
	dir=$(mktemp -d)
	declare -A slot=()
	finish() { # finish PID: print the stage's log and record it
		local i=${slot[$1]}
		unset "slot[$1]"
		read -r rc secs cpu <"$dir/$i.rc" || { rc=1 secs=? cpu=?; }
		echo
		echo "==== ${STAGE_NAMES[$i]} ($secs s, CPU $cpu s, exit $rc): ${STAGE_CMDS[$i]}"
		cat "$dir/$i.log"
		if [ "$rc" = 0 ]; then
			record "${STAGE_NAMES[$i]} (${secs}s, CPU ${cpu}s)" PASS
		else
			record "${STAGE_NAMES[$i]} (${secs}s, CPU ${cpu}s)" FAIL
		fi
	}
	mapfile -t order < <(for i in "${!STAGE_NAMES[@]}"; do echo "${STAGE_PRIO[$i]} $i"; done | sort -k1,1nr -k2,2n | cut -d' ' -f2)
	for i in "${order[@]}"; do
		while [ "${#slot[@]}" -ge "$STAGE_JOBS" ]; do
			wait -n -p pid "${!slot[@]}"
			finish "$pid"
		done
		echo "---- starting ${STAGE_NAMES[$i]} (at $((SECONDS - SUITE_START)) s)"
		(
			start=$SECONDS
			eval "${STAGE_CMDS[$i]}" >"$dir/$i.log" 2>&1
			rc=$?
			times >"$dir/$i.times"
			echo "$rc $((SECONDS - start)) $(cpu_seconds <"$dir/$i.times")" >"$dir/$i.rc"
		) &
		slot[$!]=$i
	done
	while [ "${#slot[@]}" -gt 0 ]; do
		wait -n -p pid "${!slot[@]}"
		finish "$pid"
	done
	rm -rf "$dir"
}

SUITE_START=$SECONDS
STAGE_JOBS=${STAGE_JOBS:-3}
go_test=(go test -race -count=1 -timeout "$TEST_TIMEOUT")
# Compile every package and its tests once first (race-instrumented, as the
# stages run them), so the stages below do not compile the same packages
# side by side. `go list -export` compiles without linking: each unit stage's
# go test links its own binary anyway. The integration package is built once,
# linked, without the race detector, and every integration stage runs that
# one binary: its tests drive servers that are separate processes (never
# built with -race there), so the detector would check only the harness, and
# under it the harness cost 17 times the CPU (parsing the t/ suite's output,
# the clients' byte pushing): dropping it cut the suite by ~330 CPU-s, a fifth.
compile_tests() {
	go list -test -export -race -f '{{.ImportPath}}' $(go list ./... | grep -v '/integration$') >/dev/null &&
		go test -c -o "$IT_BIN" ./integration
}
IT_BIN=$(mktemp -d)/integration.test
trap 'rm -rf "$(dirname "$IT_BIN")"' EXIT
step "compile test packages" compile_tests
step "integration areas named" ./integration/tests-in --check

# run_integration TIMEOUT REGEX [NAME=VALUE...]: the integration tests
# matching REGEX, from the binary built above, in the package's directory
# as go test runs them, with the variables given added to the environment.
run_integration() {
	local timeout=$1 run=$2
	shift 2
	(cd integration && env "$@" "$IT_BIN" -test.paniconexit0 -test.timeout "$timeout" -test.run "$run")
}

# The reference memcached (1.6.45, built from Debian's source package with
# TLS and SASL) and the trees of both t/ suites, made once into the test
# cache before the stages start: the differential tests, the client
# transcripts, internal/protocol's comparisons and the t/ stages all use
# them, and would otherwise wait on one build side by side (about a minute
# of CPU on a fresh clone; nothing once the cache holds it).
step "reference memcached and t/ trees" run_integration 15m "$(./integration/tests-in reference)"

# memcached's own t/ suite, one stage per engine (three files at a time in
# each), and in its TLS mode (tls: SSL_TEST=1, every TCP client over TLS):
# 1.6.45's, the reference, on every engine; 1.6.18's (Debian 12's, whose
# changed replies its ratchet lists) on the default engine, which keeps
# that list true for a stage's CPU. The stages run side by side;
# binary-sasl.t, whose sasldb has a fixed path in /tmp, takes a lock on it
# (integration/tsuite_lock_test.go).
tsuite_run=$(./integration/tests-in tsuite)
for eng in $(tr ',' ' ' <<<"${GOCACHED_TSUITE_ENGINES:-default,go,uring,tls}"); do
	case $eng in
	tls) prio=100 ;;
	default) prio=90 ;;
	go) prio=89 ;;
	*) prio=88 ;;
	esac
	# (a longer hang guard: over TLS on a loaded machine restart.t and
	# maxconns.t take minutes)
	stage "$prio" "memcached 1.6.45 t/ suite ($eng)" run_integration 20m "$tsuite_run" \
		GOCACHED_TSUITE_RELEASE=1.6.45 GOCACHED_TSUITE_ENGINES="$eng"
done
for eng in $(tr ',' ' ' <<<"${TSUITE_1618_ENGINES-default}"); do
	stage 87 "memcached 1.6.18 t/ suite ($eng)" run_integration 20m "$tsuite_run" \
		GOCACHED_TSUITE_RELEASE=1.6.18 GOCACHED_TSUITE_ENGINES="$eng"
done
# The unit packages: internal/protocol alone is the longest.
mapfile -t units < <(go list ./... | grep -vE '/integration$|/internal/protocol$')
stage 95 "go test -race internal/protocol" "${go_test[@]}" ./internal/protocol
stage 85 "go test -race (every other package but integration)" "${go_test[@]}" "${units[@]}"
# integration, one run per area (integration/doc.go lists them).
declare -A area_prio=([diff]=80 [clients]=60 [hostile]=40 [memory]=30 [service]=30 [rss]=20 [server]=20)
while read -r area; do
	case $area in tsuite | reference) continue ;; esac
	stage "${area_prio[$area]:-30}" "integration: $area" run_integration "$TEST_TIMEOUT" "$(./integration/tests-in "$area")"
done < <(./integration/tests-in)

# --- fuzz targets, discovered so new ones are picked up ---------------------
# One line per target: "<package dir> <FuzzName>".
fuzz_targets() {
	grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . 2>/dev/null |
		grep -v '^\./\.' |
		sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' |
		sort -u
}

# build_fuzz DIR NAME BIN: the fuzzing-instrumented test binary of DIR's
# package (any one of its targets names it to go test; the instrumentation
# covers the package, so the binary fuzzes every target in it). One build
# per package, not per target: the stage's CPU went from 180-210 s to 150-175 s.
build_fuzz() {
	go test -c -fuzz "^$2\$" -o "$3" "$1"
}

# run_fuzz DIR NAME BIN LOG: one worker each, so FUZZ_JOBS targets share
# the CPUs; the exit status goes to LOG.rc. The binary runs in the
# package's directory (a failing input is written to its testdata) with
# the corpus cache go test would use. Go 1.26's fuzzing coordinator can
# end a run whose time is up with "context deadline exceeded" though no
# input failed (go.dev/issue/75804, fixed in Go 1.27; seen on a loaded
# 2-CPU machine, twice in a row for one target): a run that failed only so
# (no failing input written, no test line, no panic) counts as passed, and
# says so in its log.
run_fuzz() {
	local cache
	cache="$(go env GOCACHE)/fuzz/$(go list "$1")"
	(cd "$1" && "$3" -test.run '^$' -test.fuzz "^$2\$" -test.fuzztime "$FUZZTIME" -test.parallel 1 \
		-test.fuzzcachedir "$cache") >"$4" 2>&1
	local rc=$?
	if [ "$rc" != 0 ] && grep -q '^    context deadline exceeded$' "$4" &&
		! grep -qE 'Failing input written to|^panic:|^ +[^ ]+_test\.go:[0-9]+:' "$4"; then
		echo "(passed: only Go's fuzzing coordinator failed, on its own deadline: go.dev/issue/75804)" >>"$4"
		rc=0
	fi
	echo "$rc" >"$4.rc"
}

# show_fuzz_failure DIR LOG prints a failed target's report: the start of
# the failure (where two long replies first differ) and its end, and the
# failing input Go saved in the package's testdata, which a fresh clone
# loses with the clone.
show_fuzz_failure() {
	local at input
	at=$(grep -n -m1 -E -- '--- FAIL|^panic:|Failing input written to' "$2" | cut -d: -f1)
	if [ -n "$at" ] && [ "$(wc -l <"$2")" -gt $((at + 100)) ]; then
		sed -n "$((at > 5 ? at - 5 : 1)),$((at + 60))p" "$2"
		echo "    [...]"
	fi
	tail -n 40 "$2"
	input=$(sed -n 's/.*Failing input written to \(testdata[^ ]*\).*/\1/p' "$2" | head -n 1)
	if [ -n "$input" ] && [ -f "$1/$input" ]; then
		echo "failing input ($1/$input):"
		cat "$1/$input"
	fi
}

# fuzz_all builds each package's fuzzing binary, runs every target,
# FUZZ_JOBS at a time, and fails if any fails.
fuzz_all() {
	local fuzzlog dir name log i rc=0
	declare -A bin=()
	fuzzlog=$(mktemp -d)
	mapfile -t targets < <(fuzz_targets)
	for i in "${!targets[@]}"; do
		read -r dir name <<<"${targets[$i]}"
		[ -n "${bin[$dir]:-}" ] && continue
		bin[$dir]="$fuzzlog/bin$i.test"
		if ! build_fuzz "$dir" "$name" "${bin[$dir]}"; then
			echo "FAIL building the fuzzing binary of $dir"
			rm -rf "$fuzzlog"
			return 1
		fi
	done
	echo "fuzzing ${#targets[@]} targets in ${#bin[@]} packages, $FUZZTIME each, $FUZZ_JOBS at a time"
	for i in "${!targets[@]}"; do
		read -r dir name <<<"${targets[$i]}"
		while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do sleep 0.2; done
		run_fuzz "$dir" "$name" "${bin[$dir]}" "$fuzzlog/$i.log" &
	done
	wait
	for i in "${!targets[@]}"; do
		read -r dir name <<<"${targets[$i]}"
		log="$fuzzlog/$i.log"
		if [ "$(cat "$log.rc" 2>/dev/null)" = 0 ]; then
			echo "PASS fuzz $name ($dir)"
		else
			rc=1
			echo "FAIL fuzz $name ($dir):"
			show_fuzz_failure "$dir" "$log"
		fi
	done
	rm -rf "$fuzzlog"
	return "$rc"
}

if [ "$FUZZTIME" != 0 ]; then
	mapfile -t targets < <(fuzz_targets)
	if [ -z "$FUZZTIME" ]; then
		# 20 s each unless that would overrun the budget; never under 5 s.
		per=$((FUZZ_BUDGET * FUZZ_JOBS / (${#targets[@]} > 0 ? ${#targets[@]} : 1)))
		FUZZTIME="$((per > 20 ? 20 : (per < 5 ? 5 : per)))s"
	fi
	stage 75 "fuzzing (${#targets[@]} targets, $FUZZTIME each)" fuzz_all
else
	record "fuzz (FUZZTIME=0)" SKIP
fi

run_stages
echo
echo "the test stages took $((SECONDS - SUITE_START)) s"
summary
exit "$FAILED"
