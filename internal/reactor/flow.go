package reactor

// The per-connection flow-control policy, one for every engine: how large
// buffers start and may be kept, when replies are sent, and when a client
// that does not read its replies stops being read.
const (
	// ReadBufSize is a connection's read buffer while its requests are
	// small (memcached's READ_BUFFER_SIZE); it grows to what Session.Want
	// asks for a large value and is dropped when empty again.
	ReadBufSize = 16 << 10
	// KeepBufMax is the largest buffer kept for reuse between batches; a
	// bigger one (after a large value) goes to the GC so idle connections
	// stay small.
	KeepBufMax = 64 << 10
	// SendAtLeast: a connection that yields under -R with requests left
	// keeps its replies for its next turn, so one pipelined read still
	// goes out in one write, unless this much is already waiting.
	SendAtLeast = 64 << 10
	// MaxUnsent is the reply backlog beyond which a connection is no
	// longer read, nor its buffered requests processed, until it drains.
	// One Process call adds at most about protocol.OutputBudget (large
	// values go out in chunks), so a client that stops reading costs at
	// most MaxUnsent plus one budget of reply memory (ClientOutputBound).
	MaxUnsent = 1 << 20
	// ClientOutputBound is the most reply memory one connection can hold:
	// the backlog that pauses it plus one Process call's output.
	ClientOutputBound = MaxUnsent + 1<<20
)

// Resume reports whether a connection whose Process call returned must get
// another turn without new input: the Session has pending output (see
// Session.Pending) and the call made progress. A pending Session whose call
// consumed nothing and wrote nothing is a watcher with nothing to say: it
// waits for its wakeup instead of spinning.
func Resume(pending bool, consumed, produced int) bool {
	return pending && (consumed > 0 || produced > 0)
}

// DrainTurn reports whether a connection the server is stopping needs one
// more turn: it ends as a half-close does (nothing more is read), so the
// requests already read are answered and a reply going out in pieces (a
// large value) is finished before it closes. Closing right after the
// replies already produced would cut such a value short and drop the
// rest of a read pipeline, which memcached and the portable engine answer.
// A pending Session gets its turn too (a watcher's writes the lines it
// holds; with nothing produced the turn closes it). Without a turn due (no
// input buffered, nothing pending) it closes once its replies are written.
func DrainTurn(buffered int, s Session) bool {
	return buffered > 0 || s != nil && s.Pending()
}

// ShouldSend reports whether unsent reply bytes must be written now: when
// the connection has no complete request left to process (the batch is
// over), or when it has but the replies already reached SendAtLeast.
func ShouldSend(unsent int, moreRequests bool) bool {
	return unsent > 0 && (!moreRequests || unsent >= SendAtLeast)
}

// ReadPaused reports whether a connection with this many unsent reply
// bytes must not be read until the client takes some.
func ReadPaused(unsent int) bool { return unsent > MaxUnsent }

// ReadBufCap is the capacity a read buffer of capacity capNow holding
// pending unconsumed bytes needs before the next read: enough for the
// request the Session wants whole, doubled when full with no size known,
// else unchanged. Sizes are rounded up to whole pages.
func ReadBufCap(capNow, pending, want int) int {
	need := max(want, pending+1, ReadBufSize)
	if pending >= capNow {
		need = max(need, 2*capNow)
	}
	if need <= capNow {
		return capNow
	}
	return (need + 4095) &^ 4095
}
