package metrics

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gocached/gocached/internal/protocol"
)

// SessionSource is the Source of a running server: every call runs
// `stats [group]` through a fresh protocol Session of env, in memory, so the
// metrics come from the very renderers clients see and count nothing a
// client would not. It speaks the text protocol, or the binary protocol's
// STAT when env takes binary connections only (-B binary). With SASL (-S)
// a Session must authenticate first, so the request goes to a Session of a
// plain Env sharing env's store, settings and engine: then the protocol's
// own counters (store_too_large, store_no_memory, auth_*, cmd_meta) read 0.
func SessionSource(env *protocol.Env) Source {
	return SourceFunc(func(group string) (map[string]string, error) {
		switch {
		case env.SASL != nil:
			plain := &protocol.Env{Store: env.Store, Settings: env.Settings, Server: env.Server, StartUnix: env.StartUnix}
			return textStats(plain, group)
		case env.Protocol == protocol.BindingBinary:
			return binaryStats(env, group)
		}
		return textStats(env, group)
	})
}

// maxStatsRequests bounds the Process calls of one stats request: a stats
// reply is produced by one request, and the Session consumes it in one call.
const maxStatsRequests = 4

// run feeds req to a new Session of env and returns the whole reply.
func run(env *protocol.Env, req []byte) ([]byte, error) {
	s := protocol.NewSession(env)
	var out []byte
	for range maxStatsRequests {
		n, reply, st := s.Process(req, out)
		out, req = reply, req[n:]
		if len(req) == 0 || st == protocol.Close {
			return out, nil
		}
	}
	return nil, errors.New("stats request not consumed")
}

// textStats runs `stats [group]` in the text protocol.
func textStats(env *protocol.Env, group string) (map[string]string, error) {
	req := "stats\r\n"
	if group != "" {
		req = "stats " + group + "\r\n"
	}
	out, err := run(env, []byte(req))
	if err != nil {
		return nil, err
	}
	return ParseStats(out)
}

// ParseStats reads a text `stats` reply, "STAT name value" lines up to
// "END". An "ERROR" reply (a group the server does not know) is
// ErrUnknownGroup.
func ParseStats(b []byte) (map[string]string, error) {
	m := map[string]string{}
	for len(b) > 0 {
		line, rest, ok := bytes.Cut(b, []byte("\r\n"))
		if !ok {
			return nil, fmt.Errorf("stats reply ends without END: %q", abbrev(b))
		}
		b = rest
		switch {
		case string(line) == "END":
			return m, nil
		case string(line) == "ERROR":
			return nil, ErrUnknownGroup
		case bytes.HasPrefix(line, []byte("STAT ")):
			name, value, _ := bytes.Cut(line[len("STAT "):], []byte(" "))
			m[string(name)] = string(value)
		default:
			return nil, fmt.Errorf("stats reply line %q", abbrev(line))
		}
	}
	return nil, errors.New("stats reply ends without END")
}

func abbrev(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// Binary protocol framing: a 24-byte header, then extras, key and value.
const (
	binHeader     = 24
	binReqMagic   = 0x80
	binResMagic   = 0x81
	binOpStat     = 0x10
	binStatusOK   = 0
	binStatusMiss = 1 // key not found: an unknown group
)

// binaryStats runs a binary STAT request for group: one response per stat
// with the name as key and the value as value, then an empty one.
func binaryStats(env *protocol.Env, group string) (map[string]string, error) {
	req := make([]byte, binHeader+len(group))
	req[0], req[1] = binReqMagic, binOpStat
	binary.BigEndian.PutUint16(req[2:], uint16(len(group)))
	binary.BigEndian.PutUint32(req[8:], uint32(len(group)))
	copy(req[binHeader:], group)
	out, err := run(env, req)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for len(out) >= binHeader {
		keyLen := int(binary.BigEndian.Uint16(out[2:]))
		extLen := int(out[4])
		status := binary.BigEndian.Uint16(out[6:])
		bodyLen := int(binary.BigEndian.Uint32(out[8:]))
		if out[0] != binResMagic || out[1] != binOpStat || len(out) < binHeader+bodyLen || extLen+keyLen > bodyLen {
			return nil, fmt.Errorf("binary stats reply %x", out[:binHeader])
		}
		switch status {
		case binStatusOK:
		case binStatusMiss:
			return nil, ErrUnknownGroup
		default:
			return nil, fmt.Errorf("binary stats status %#x", status)
		}
		body := out[binHeader+extLen : binHeader+bodyLen]
		out = out[binHeader+bodyLen:]
		if keyLen == 0 {
			return m, nil
		}
		m[string(body[:keyLen])] = string(body[keyLen:])
	}
	return nil, errors.New("binary stats reply ends without its terminator")
}
