#!/usr/bin/env bash
# test.sh: gocached's one test entry point (CI runs it through .ci/run).
#
# On a fresh Debian machine, as root, it first installs the Debian packages
# the tests use when any is missing (and stops the memcached service the
# package starts), then runs: gofmt check, go vet, go test -race over every
# package, and every fuzz target in the tree for a short time.
#
# Environment:
#   FUZZTIME        time per fuzz target (default: 20s, shortened to fit
#                   FUZZ_BUDGET when there are many targets; 0 skips fuzzing)
#   FUZZ_BUDGET     wall-clock seconds for all fuzzing when FUZZTIME is unset (default 120)
#   FUZZ_JOBS       fuzz targets run at once, one worker each (default: nproc)
#   TEST_TIMEOUT    go test -timeout per package (default 10m: a hang guard;
#                   the integration package alone takes about 5 min under -race)
#   GOCACHED_TSUITE_ENGINES  engines memcached's t/ suite runs against
#                   (default: default,go,uring,tls)
#   GOCACHED_REQUIRE_TESTBED=1  missing tools/root fail tests instead of skipping
set -uo pipefail

cd "$(dirname "$0")"
FUZZTIME=${FUZZTIME:-}
FUZZ_BUDGET=${FUZZ_BUDGET:-120}
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
TEST_TIMEOUT=${TEST_TIMEOUT:-10m}
PACKAGES=(iproute2 ethtool memcached python3-pymemcache libmemcached-tools
	ruby ruby-dalli python3-pylibmc php-cli php-memcached nutcracker sasl2-bin
	php-memcache libcache-memcached-fast-perl git scons libevent-dev gengetopt g++
	gcc perl xz-utils libio-socket-ssl-perl)

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
		perl -MIO::Socket::SSL -e 1 2>/dev/null
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
step "go test -race" go test -race -count=1 -timeout "$TEST_TIMEOUT" -skip '^TestMemcachedTSuite$' ./...
# memcached's own t/ suite against each engine (about 1.5 min per engine, three files at a time),
# and once more in its TLS mode (SSL_TEST=1: every TCP client over TLS):
# its own step, so its minutes do not count against the package timeout
# above and its time shows in the summary.
step "memcached t/ suite" env GOCACHED_TSUITE_ENGINES="${GOCACHED_TSUITE_ENGINES:-default,go,uring,tls}" \
	go test -race -count=1 -timeout 25m -run '^TestMemcachedTSuite$' ./integration

# --- fuzz targets, discovered so new ones are picked up ---------------------
# One line per target: "<package dir> <FuzzName>".
fuzz_targets() {
	grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . 2>/dev/null |
		grep -v '^\./\.' |
		sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' |
		sort -u
}

# run_fuzz DIR NAME LOG: one worker each, so FUZZ_JOBS targets share the
# CPUs; the exit status goes to LOG.rc. Go's fuzzer sometimes ends a run
# whose time is up with "context deadline exceeded" and no failing input
# (a toolchain flake, seen on a loaded 2-CPU machine): such a run is
# repeated once; a run that wrote a failing input never is.
run_fuzz() {
	go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" -parallel 1 "$1" >"$3" 2>&1
	local rc=$?
	if [ "$rc" != 0 ] && grep -q 'context deadline exceeded' "$3" && ! grep -q 'Failing input written to' "$3"; then
		mv "$3" "$3.first"
		go test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" -parallel 1 "$1" >"$3" 2>&1
		rc=$?
		{ echo "(repeated after a deadline-only failure:)"; tail -n 5 "$3.first"; } >>"$3"
	fi
	echo "$rc" >"$3.rc"
}

if [ "$FUZZTIME" != 0 ]; then
	fuzzlog=$(mktemp -d)
	trap 'rm -rf "$fuzzlog"' EXIT
	mapfile -t targets < <(fuzz_targets)
	if [ -z "$FUZZTIME" ]; then
		# 20 s each unless that would overrun the budget; never under 5 s.
		per=$((FUZZ_BUDGET * FUZZ_JOBS / (${#targets[@]} > 0 ? ${#targets[@]} : 1)))
		FUZZTIME="$((per > 20 ? 20 : (per < 5 ? 5 : per)))s"
	fi
	echo
	echo "==== fuzzing ${#targets[@]} targets, $FUZZTIME each, $FUZZ_JOBS at a time"
	fuzz_start=$SECONDS
	for i in "${!targets[@]}"; do
		read -r dir name <<<"${targets[$i]}"
		while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do sleep 0.2; done
		run_fuzz "$dir" "$name" "$fuzzlog/$i.log" &
	done
	wait
	for i in "${!targets[@]}"; do
		read -r dir name <<<"${targets[$i]}"
		log="$fuzzlog/$i.log"
		if [ "$(cat "$log.rc" 2>/dev/null)" = 0 ]; then
			record "fuzz $name ($dir)" PASS
		else
			record "fuzz $name ($dir)" FAIL
			echo "---- fuzz $name ($dir) failed:"
			tail -n 40 "$log"
		fi
	done
	echo "fuzzing took $((SECONDS - fuzz_start))s"
else
	record "fuzz (FUZZTIME=0)" SKIP
fi

summary
exit "$FAILED"
