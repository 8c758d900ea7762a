package protocol

import "github.com/gocached/gocached/internal/store"

// binaryState is the binary request being answered: its header, what its
// reply carries, and the store callbacks that format it. key points into
// the engine's input only during a Process call.
type binaryState struct {
	header binHeader
	// quiet: the opcode is a quiet one (GetQ, SetQ, ...), answered only
	// on an error (or, for a get, on a hit).
	quiet bool
	// headerDumped and cmdLogged: at -vv, the request's header has been
	// dumped and its command line written.
	headerDumped bool
	cmdLogged    bool
	// key is a get's key; replyKey and replyValue say whether its reply
	// carries the key (GetK, GATK) and the value (not Touch).
	key        []byte
	replyKey   bool
	replyValue bool
	// The incr/decr being answered: the expiry its create sets, whether it
	// created the item, and the value and CAS to reply with.
	arithExptime int64
	arithCreated bool
	arithValue   uint64
	arithCAS     uint64
	// The store callbacks, bound once so that calls do not allocate.
	getFn   func(value []byte, m store.Meta)
	arithFn func(it store.Item, value uint64, created bool)
	// statLines is where a binary STAT renders the text lines first.
	statLines []byte
}

// bind sets the store callbacks to s's methods; a method value built per
// request would allocate.
func (b *binaryState) bind(s *Session) {
	b.getFn = s.binEmitValue
	b.arithFn = s.binArithItem
}

// endRequest forgets what -vv already wrote of the request just answered.
func (b *binaryState) endRequest() { b.headerDumped, b.cmdLogged = false, false }

// endCall drops the reference into the engine's input at the end of a
// Process call, so that the engine may reuse or free its buffer.
func (b *binaryState) endCall() { b.key = nil }

// reset prepares the state for a new connection; the rest is rewritten by
// every request.
func (b *binaryState) reset() { b.endRequest() }
