package protocol

import (
	"bytes"
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// memcached's LRU crawler commands. gocached has no crawler thread: its
// reclaimer already sweeps expired items, so `lru_crawler crawl` only
// validates its class list, and `lru_crawler metadump` walks the store
// directly (store.Dump), streaming memcached's lines a bounded amount per
// Process call (see Session.Pending).

const (
	rCrawlerOff  = "CLIENT_ERROR lru crawler disabled\r\n"
	rBadClass    = "BADCLASS invalid class id\r\n"
	rNotStarted  = "NOTSTARTED no items to crawl\r\n"
	rCrawlerBusy = "BUSY currently processing crawler request\r\n"
	dumpSlotStep = 4096 // index slots one dump step examines
)

// dumpState is a metadump in progress.
type dumpState struct {
	cursor  store.DumpCursor
	all     bool
	classes [maxSlabClassID + 1]bool
	// keys: an mgdump (memcached 1.6.19 on), one "mg <key>" line per
	// item and "EN" at the end, rather than a metadump.
	keys bool
}

func (s *Session) lruCrawler(line []byte, n int) {
	if n == 2 {
		switch string(s.text.token(line, 1)) {
		case "enable":
			started := false
			s.env.adminUpdate(func(a *adminState) {
				started = a.crawlerOff
				a.crawlerOff = false
			})
			if started {
				s.env.Store.SetCrawler(true)
				s.reply(rOK)
			} else {
				s.reply("ERROR failed to start lru crawler thread\r\n")
			}
		case "disable":
			s.env.adminUpdate(func(a *adminState) { a.crawlerOff = true })
			s.env.Store.SetCrawler(false)
			s.reply(rOK)
		default:
			s.reply(rError)
		}
		return
	}
	if n != 3 {
		s.reply(rError)
		return
	}
	arg := s.text.token(line, 2)
	switch string(s.text.token(line, 1)) {
	case "crawl":
		if !s.env.adminSnapshot().crawler {
			s.reply(rCrawlerOff)
			return
		}
		var d dumpState
		r := parseCrawlClasses(arg, &d)
		if r == rOK && !s.env.crawlerBusy.CompareAndSwap(false, true) {
			r = rCrawlerBusy
		}
		if r == rOK {
			s.env.adminUpdate(func(a *adminState) { a.crawlerStarts++ })
			// In the background, as memcached's crawler thread: a sweep of
			// a large store must not hold up this connection's reactor.
			// It holds the crawler (lru_crawler_running) until done.
			s.env.background(func() {
				defer s.env.crawlerBusy.Store(false)
				s.env.Store.Crawl()
			})
		}
		s.reply(r)
	case "metadump":
		s.metadump(arg, false)
	case "mgdump":
		s.metadump(arg, true)
	case "tocrawl":
		v, ok := parseStrictUint32(arg) // mc_toktou32
		if !ok {
			s.reply(rBadFormat)
			return
		}
		s.env.adminUpdate(func(a *adminState) { a.crawlerToCrawl = v })
		s.reply(rOK)
	case "sleep":
		v, ok := parseStrictUint32(arg) // mc_toktou32
		switch {
		case !ok:
			s.reply(rBadFormat)
		case v > 1000000:
			s.reply("CLIENT_ERROR sleep must be one second or less\r\n")
		default:
			s.env.adminUpdate(func(a *adminState) { a.crawlerSleep = v })
			s.reply(rOK)
		}
	default:
		s.reply(rError)
	}
}

// parseCrawlClasses reads memcached's crawler argument ("all", "hash", or
// comma-separated class ids) into d and returns the reply a crawl gets.
func parseCrawlClasses(arg []byte, d *dumpState) string {
	switch string(arg) {
	case "all", "hash":
		d.all = true
		return rOK
	}
	any := false
	for len(arg) > 0 {
		i := 0
		for i < len(arg) && arg[i] != ',' {
			i++
		}
		if i > 0 { // strtok skips empty fields
			id, ok := parseUint32(arg[:i])
			if !ok || id < 1 || id > maxSlabClassID {
				return rBadClass
			}
			d.classes[id] = true
			any = true
		}
		arg = arg[min(i+1, len(arg)):]
	}
	if !any {
		return rNotStarted
	}
	return rOK
}

// metadump runs `lru_crawler metadump` or, with keys, `lru_crawler mgdump`.
func (s *Session) metadump(arg []byte, keys bool) {
	switch {
	case !s.env.adminSnapshot().crawler:
		s.reply(rCrawlerOff)
		return
	case s.env.Settings != nil && s.env.Settings.DumpDisabled && keys:
		s.reply("ERROR key dump not allowed\r\n")
		return
	case s.env.Settings != nil && s.env.Settings.DumpDisabled:
		s.reply("ERROR metadump not allowed\r\n")
		return
	case s.hasPendingReplies() && keys:
		s.reply("ERROR cannot pipeline other commands before mgdump\r\n")
		return
	case s.hasPendingReplies():
		s.reply("ERROR cannot pipeline other commands before metadump\r\n")
		return
	}
	d := &dumpState{keys: keys}
	if r := parseCrawlClasses(arg, d); r != rOK {
		s.reply(r)
		return
	}
	// One at a time, as memcached's single crawler thread: a dump holds
	// up to a turn of output per connection, and any number of clients
	// could otherwise start one each.
	if !s.env.crawlerBusy.CompareAndSwap(false, true) {
		s.reply(rCrawlerBusy)
		return
	}
	s.env.adminUpdate(func(a *adminState) { a.crawlerStarts++ })
	if s.conn.datagramID != 0 {
		// memcached's crawler writes a dump straight to the connection's
		// socket, which for UDP has no peer: nothing is sent, and the
		// connection, handed to the crawler, drops the rest of the
		// datagram. Sending the dump instead would answer one small
		// datagram, whose source anyone can forge, with up to
		// UDPReplyMax of key names.
		s.env.crawlerBusy.Store(false)
		s.conn.dropDatagram = true
		return
	}
	s.stream.dump = d
	// memcached 1.6.43 on answers a dump that starts with OK.
	s.out = append(s.out, rOK...)
	s.continueDump()
}

// continueDump writes metadump lines until the output budget is spent (or,
// for an engine that does not resume pending Sessions, until the end).
func (s *Session) continueDump() {
	d := s.stream.dump
	bounded := s.env.ResumesPending
	for {
		done := s.env.Store.Dump(&d.cursor, dumpSlotStep, s.stream.dumpFn)
		if done {
			if d.keys {
				s.out = append(s.out, rMetaMiss+crlf...)
			} else {
				s.out = append(s.out, rEnd...)
			}
			s.endDump()
			s.markFlushed() // memcached's crawler wrote it directly
			return
		}
		if bounded && len(s.out)-s.outStart >= OutputBudget {
			return
		}
	}
}

// Abandon frees what the Session holds in state shared with other
// connections, for an engine dropping it after a panic without Reset: the
// crawler of a metadump and a watch subscription.
func (s *Session) Abandon() {
	s.endDump()
	s.stopWatch()
	s.endMem()
}

// endDump ends this Session's metadump, if any, freeing the crawler.
func (s *Session) endDump() {
	if s.stream.dump != nil {
		s.stream.dump = nil
		s.env.crawlerBusy.Store(false)
	}
}

// dumpItem appends one metadump line (memcached's format, ending in a bare
// "\n") unless the output budget is spent.
func (s *Session) dumpItem(it store.Item) bool {
	d := s.stream.dump
	if !d.all {
		if c := it.Class(); c > maxSlabClassID || !d.classes[c] {
			return true
		}
	}
	if s.env.ResumesPending && len(s.out)-s.outStart >= OutputBudget {
		return false
	}
	if d.keys {
		s.out = appendMgdumpLine(s.out, it)
		return true
	}
	b := append(s.out, "key="...)
	b = appendURIEncoded(b, it.Key())
	b = append(b, " exp="...)
	if e := it.Exptime(); e == 0 {
		b = append(b, "-1"...)
	} else {
		b = strconv.AppendInt(b, e, 10)
	}
	b = append(b, " la="...)
	b = strconv.AppendInt(b, it.LastAccess(), 10)
	b = append(b, " cas="...)
	b = strconv.AppendUint(b, it.CAS(), 10)
	if it.Fetched() {
		b = append(b, " fetch=yes cls="...)
	} else {
		b = append(b, " fetch=no cls="...)
	}
	b = strconv.AppendInt(b, int64(it.Class()), 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(it.Size()), 10)
	// Client flags since memcached 1.6.24, and its line keeps the space
	// that ends each field.
	b = append(b, " flags="...)
	b = strconv.AppendUint(b, uint64(it.Flags()), 10)
	s.out = append(b, " \n"...)
	return true
}

// appendURIEncoded percent-encodes every byte but ASCII letters, digits and
// "-._~", as memcached's uriencode does for keys in log and dump lines.
func appendURIEncoded(b, key []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range key {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return b
}

// cachedumpLimit is memcached's 2 MB bound on a `stats cachedump` reply.
const cachedumpLimit = 2 << 20

// cachedump runs `stats cachedump <class> <limit>`: "ITEM key [n b; t s]"
// lines for up to limit items (0 = all) of the class, within 2 MB.
func (s *Session) cachedump(line []byte, n int) {
	if st := s.env.Settings; st != nil && st.DumpDisabled {
		s.out = append(s.out, "CLIENT_ERROR stats cachedump not allowed\r\n"...)
		return
	}
	if n < 4 {
		s.out = append(s.out, "CLIENT_ERROR bad command line\r\n"...)
		return
	}
	id, ok1 := parseStrictUint32(s.text.token(line, 2)) // mc_toktou32
	limit, ok2 := parseStrictUint32(s.text.token(line, 3))
	if !ok1 || !ok2 {
		s.out = append(s.out, rBadFormat...)
		return
	}
	if id > maxSlabClassID {
		s.out = append(s.out, "CLIENT_ERROR Illegal slab id\r\n"...)
		return
	}
	start := len(s.out)
	shown, stop := uint32(0), false
	var c store.DumpCursor
	for !stop && !s.env.Store.Dump(&c, 1<<20, func(it store.Item) bool {
		if limit != 0 && shown >= limit {
			stop = true
			return false
		}
		if it.Class() != int(id) || it.KeyBinary() {
			return true
		}
		b := append(s.out, "ITEM "...)
		key := it.Key()
		if i := bytes.IndexByte(key, 0); i >= 0 {
			key = key[:i] // memcached prints the key as a C string
		}
		b = append(b, key...)
		b = append(b, " ["...)
		b = strconv.AppendInt(b, int64(it.ValueLen()), 10)
		b = append(b, " b; "...)
		b = strconv.AppendInt(b, it.Exptime(), 10)
		b = append(b, " s]\r\n"...)
		if len(b)-start+len(rEnd)+1 > cachedumpLimit {
			s.out = b[:len(s.out)]
			stop = true
			return false
		}
		s.out = b
		shown++
		return true
	}) {
	}
	s.out = append(s.out, rEnd...)
}

// appendMgdumpLine writes an mgdump line: "mg <key>\r\n", or for a key
// sent base64-encoded "mg <base64> b\r\n", ready to send back as a command.
func appendMgdumpLine(b []byte, it store.Item) []byte {
	b = append(b, "mg "...)
	if it.KeyBinary() {
		b = appendBase64(b, it.Key())
		b = append(b, " b"...)
	} else {
		b = append(b, it.Key()...)
	}
	return append(b, crlf...)
}

// background runs work as Env.Background says.
func (e *Env) background(work func()) {
	if e.Background != nil {
		e.Background(work)
		return
	}
	go work()
}
