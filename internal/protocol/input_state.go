package protocol

// inputState is what the unconsumed input needs before the next request
// can be parsed from it: bytes to drop, or a size to grow the engine's
// buffer to.
type inputState struct {
	// swallow is how many bytes of a rejected data block are still to be
	// dropped (memcached's conn_swallow).
	swallow int64
	// want is the buffer size the first unconsumed request needs, or 0
	// (Want); wantLine: it is for the rest of a long command line or of a
	// binary header, which memcached waits for in conn_read, not for a
	// value or a binary request's body (conn_nread; IdleKickable,
	// ReadingData).
	want     int
	wantLine bool
	// scanned is how many leading bytes of the unconsumed input are known
	// to hold no '\n', so that a long line arriving in many reads is not
	// searched from its start every time.
	scanned int
}

// startCall forgets the last call's want: the call finds out anew.
func (i *inputState) startCall() { i.want, i.wantLine = 0, false }

// swallowFrom drops what it can of a rejected data block from the front
// of in and returns how many bytes that was.
func (i *inputState) swallowFrom(in []byte) int {
	n := min(int64(len(in)), i.swallow)
	i.swallow -= n
	i.scanned = 0
	return int(n)
}

// reset prepares the state for a new connection.
func (i *inputState) reset() { *i = inputState{} }
