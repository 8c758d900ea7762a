package reactor

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/gocached/gocached/internal/protocol"
)

// RejectMessage is memcached's reply to a client beyond -c, sent before the
// connection is closed.
var RejectMessage = []byte("ERROR Too many open connections\r\n")

// SessionPanic is a panic raised inside Session.Process, with its stack.
type SessionPanic struct {
	Value any
	Stack []byte
}

func (p *SessionPanic) Error() string { return fmt.Sprintf("session panicked: %v", p.Value) }

// LogSessionPanic logs err, a failed RunSession (or UDPFrames), on log as
// msg (which says what becomes of the connection or request) with attrs,
// the error, and the panic's stack: one form for every engine.
func LogSessionPanic(log *slog.Logger, msg string, err error, attrs ...any) {
	attrs = append(attrs, "err", err)
	if p, ok := err.(*SessionPanic); ok {
		attrs = append(attrs, "stack", string(p.Stack))
	}
	log.Error(msg, attrs...)
}

// RunSession calls s.Process and turns a panic into an error, so that a bug
// in one connection's request handling closes that connection only instead
// of taking the whole cache down. After an error the Session's state is
// unknown: the engine must close the connection and not reuse the Session.
func RunSession(s Session, in, out []byte) (consumed int, reply []byte, st protocol.Status, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &SessionPanic{Value: v, Stack: debug.Stack()}
			abandon(s)
		}
	}()
	consumed, reply, st = s.Process(in, out)
	return consumed, reply, st, nil
}

// abandon lets a Session that panicked give back what it holds in state
// shared with other connections (protocol.Session: the LRU crawler of a
// metadump, a watch subscription), which Reset would have freed; a second
// panic there is swallowed, the connection being dropped anyway.
func abandon(s Session) {
	a, ok := s.(interface{ Abandon() })
	if !ok {
		return
	}
	defer func() { _ = recover() }()
	a.Abandon()
}
