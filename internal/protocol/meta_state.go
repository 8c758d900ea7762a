package protocol

import "github.com/gocached/gocached/internal/store"

// metaState is what a meta command (mg, ms, md, ma, me) carries from its
// line to the store callbacks that format its reply. It points into the
// engine's input only during a Process call.
type metaState struct {
	flags metaFlags
	// key is the request's key: the key token itself, or its base64
	// decoding in keyBuf when the b flag is given.
	key    []byte
	keyBuf []byte
	// line and tokens are the request line and its token count, from
	// which the callbacks format the reply.
	line   []byte
	tokens int
	// arithCreated: the ma being answered created its item.
	arithCreated bool
	// opaqueTooLong: an mg or ma met an opaque over 32 bytes while
	// answering, which memcached notices only there.
	opaqueTooLong bool
	// flashHeld: the mg being answered holds its line for a flash read.
	flashHeld  bool
	flashTouch bool // the held mg counted as a touch (T)
	// The store callbacks, bound once so that calls do not allocate.
	getFn   func(it store.Item, created bool) bool
	arithFn func(it store.Item, value uint64, created bool)
	debugFn func(it store.Item)
}

// bind sets the store callbacks to s's methods; a method value built per
// request would allocate.
func (m *metaState) bind(s *Session) {
	m.getFn = s.metaGetItem
	m.arithFn = s.metaArithItem
	m.debugFn = s.metaDebugItem
}

// endCall drops the references into the engine's input at the end of a
// Process call, so that the engine may reuse or free its buffer.
func (m *metaState) endCall() { m.key, m.line = nil, nil }

// reset prepares the state for a new connection; the flags and the key
// buffer are rewritten by every request.
func (m *metaState) reset() { m.endCall() }
