// Package protocol implements memcached's text, meta and binary protocols
// with no I/O of its own: an engine hands a Session the bytes it read, and
// the Session appends the replies to the engine's output buffer.
//
// The meta commands (mg ms md ma mn me) follow memcached 1.6.18: the flags
// of a command are applied and answered in the order the client sent them,
// under the item's lock (the store hands the Session a store.Item for that),
// and they bump the same stats counters memcached's do. The data block of an
// ms is never executed as a command: see meta_set.go for the one place
// gocached closes the connection where memcached would execute data.
//
// The binary protocol (binary*.go) is chosen per connection by Env.Protocol
// (-B; by default the first byte decides, 0x80 meaning binary) and covers
// every opcode memcached 1.6.18 implements, with its status codes, texts
// and framing errors; Env.SASL (-S) adds authentication as memcached's
// libsasl2 runs it: the SCRAMs, CRAM-MD5, PLAIN and LOGIN against a
// password lookup (Cyrus SASL's sasldb), or PLAIN against a
// MEMCACHED_SASL_PWDB-style file (sasl.go, sasl_scram.go). All three protocols
// share one store and one set of stats counters.
//
// Replies match memcached 1.6.18 byte for byte, quirks included (number
// parsing, noreply silencing errors, which malformed lines get ERROR and
// which CLIENT_ERROR), because clients resynchronise on exactly those
// replies. The deliberate differences are few and listed in scripts_test.go:
// line limits are judged on the line rather than on what one read()
// returned, and a multiget line is bounded; the meta protocol's are in
// meta_scripts_test.go.
//
// The design keeps replies independent of how the input was split: a request
// is handled only once it is complete (a storage command whose data block has
// not arrived is left unconsumed and parsed again later, unless the block is
// over 16 KiB: then it is received into a store reservation as it arrives and
// the line runs again at its end, recv.go), and the only state carried
// between calls is the rest of an oversized value being dropped, a value being
// received or sent in pieces, a multiget paused between keys when its reply
// outgrew one call's budget, and per connection the negotiated protocol and
// SASL state. Each concern keeps its state in a type of its own, beside its
// code and with its own reset (connInfo, inputState, getState, metaState,
// binaryState, sendState, recvState, streamState, authState, connMem), so
// that session.go holds only the Process loop and Reset calls each reset.
//
// Output is bounded per call (budget.go): with Env.ResumesPending a call
// stops starting requests once it produced OutputBudget (1 MiB), and a value
// over 64 KiB is copied from the store in pieces through a store.ValueRef,
// as much per call as the budget leaves; Pending brings the engine back (no
// conn_yield: that is -R's). The ValueRef pins the value until it is sent
// or the connection goes, as memcached's reference keeps the item it sends.
// The get and set paths do not allocate: the Session reuses its token table
// and its store callback, and writes into the engine's buffer.
//
// memcached's admin commands are answered as 1.6.18 answers them with its
// default settings (admin.go, crawler.go, detail.go, watch.go, auth.go):
// lru_crawler, slabs, lru, extstore, cache_memlimit (which resizes the
// store), stats cachedump|detail|extstore, shutdown behind -A, and the
// gating flags of Settings (-F -X -W -A -Y -D -f -n). Two of them produce
// output without input: a metadump streams a bounded amount per Process
// call, and `watch` turns the connection into a log stream. An engine that
// supports this sets Env.ResumesPending and calls Process again while
// Session.Pending reports true (for a watcher, when the wakeup it gave
// SetWakeup fires); without it a metadump is written whole and watch is
// refused. -vv lines go to Env.VerboseLog (verbose.go), with the connection
// id the engine passes to Session.Opened.
package protocol
