package protocol

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
)

// Binding is memcached's -B: which protocols a connection may speak.
type Binding uint8

const (
	// BindingAuto (the zero value, memcached's default) lets the first
	// byte a connection sends decide: 0x80, the binary request magic,
	// makes it a binary connection, anything else a text one (text and
	// meta commands mix freely on it).
	BindingAuto Binding = iota
	// BindingASCII takes every connection as text, a 0x80 byte included.
	BindingASCII
	// BindingBinary takes every connection as binary; a request that does
	// not start with the magic byte closes the connection, as in memcached.
	BindingBinary
)

// String returns the name `stats settings` uses for the binding.
func (b Binding) String() string {
	switch b {
	case BindingASCII:
		return "ascii"
	case BindingBinary:
		return "binary"
	}
	return "auto-negotiate"
}

// ParseBinding reads a -B value: "ascii", "binary" or "auto" (memcached
// also prints "auto-negotiate", which is accepted too).
func ParseBinding(s string) (Binding, error) {
	switch s {
	case "auto", "auto-negotiate", "":
		return BindingAuto, nil
	case "ascii":
		return BindingASCII, nil
	case "binary":
		return BindingBinary, nil
	}
	return 0, fmt.Errorf("unknown protocol %q: want ascii, binary or auto", s)
}

// connProto is what a connection has been found to speak.
type connProto uint8

const (
	protoUndecided connProto = iota
	protoText
	protoBinary
)

// binding is the Env's binding as a Session applies it: SASL needs the
// binary protocol, so an Env with SASL set is binary-only, as memcached
// makes -S imply -B binary.
func (e *Env) binding() Binding {
	if e.SASL != nil {
		return BindingBinary
	}
	return e.Protocol
}

// binding is the connection's: its listener's "proto[...]:" prefix
// (Env.ListenerBinding) when it has one, else the Env's. SASL still makes
// it binary: a listener cannot open a way around -S.
func (s *Session) binding() Binding {
	if s.conn.listenerBound && s.env.SASL == nil {
		return s.conn.listenerBinding
	}
	return s.env.binding()
}

// negotiate fixes the connection's protocol from its first byte and logs
// the choice at debug level, as memcached does at -vv.
func (s *Session) negotiate(first byte) {
	if s.conn.datagramID != 0 {
		s.conn.proto = datagramProto(first)
		return
	}
	switch s.binding() {
	case BindingASCII:
		s.conn.proto = protoText
	case BindingBinary:
		s.conn.proto = protoBinary
	default:
		s.conn.proto = protoText
		if first == binaryMagicRequest {
			s.conn.proto = protoBinary
		}
	}
	if s.log.verbose && s.binding() == BindingAuto {
		// memcached prints this only while negotiating.
		name := "ascii"
		if s.conn.proto == protoBinary {
			name = "binary"
		}
		s.log.line = strconv.AppendInt(s.log.line[:0], int64(s.conn.id), 10)
		s.log.line = append(s.log.line, ": Client using the "+name+" protocol\n"...)
		s.env.VerboseLog.Write(s.log.line)
	}
	if log := slog.Default(); log.Enabled(context.Background(), slog.LevelDebug) {
		name := "ascii"
		if s.conn.proto == protoBinary {
			name = "binary"
		}
		log.Debug("client using the "+name+" protocol", "protocol", name, "binding", s.binding().String())
	}
}
