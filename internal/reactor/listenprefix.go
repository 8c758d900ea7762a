package reactor

import (
	"strings"
)

// memcached 1.6's -l entries may start with "proto[NAME]:" (the protocol
// the listener's clients speak, whatever -B says) and then "tag[NAME]:" (a
// label its proxy routes by; without the proxy it has no effect). They are
// read as memcached's server_sockets reads them: NAME may be any prefix of
// "ascii", "binary" or "negotiating" (an empty one is ascii), any other
// name leaves -B's protocol, and the character after "]" is skipped
// unlooked-at, as the ':' it should be.

// ListenSpecError is an -l entry memcached refuses before it binds
// anything, with memcached's own line. memcached then reports the list as
// a listen failure with errno 0 ("Success").
type ListenSpecError struct{ Line string }

func (e *ListenSpecError) Error() string { return e.Line }

// cutListenPrefixes removes entry's proto[...] and tag[...] prefixes and
// returns the rest and the protocol named ("" for none). first is the
// list's first entry, which memcached's proxy message quotes as far as its
// parse has cut it: to the first ']' (or the separator after it).
func cutListenPrefixes(entry, first string) (rest, proto string, err error) {
	if r, ok := strings.CutPrefix(entry, "proto["); ok {
		end := strings.IndexByte(r, ']')
		if end < 0 {
			return "", "", &ListenSpecError{`Invalid protocol spec: "[` + r + `"`}
		}
		name := r[:end]
		entry = skipOne(r[end+1:])
		switch {
		case strings.HasPrefix("ascii", name):
			proto = "ascii"
		case strings.HasPrefix("binary", name):
			proto = "binary"
		case strings.HasPrefix("negotiating", name):
			proto = "negotiating"
		case strings.HasPrefix("proxy", name):
			quoted, _, _ := strings.Cut(first, "]")
			return "", "", &ListenSpecError{`Server not built with proxy: "` + quoted + `"`}
		}
	}
	if r, ok := strings.CutPrefix(entry, "tag["); ok {
		end := strings.IndexByte(r, ']')
		if end < 0 {
			return "", "", &ListenSpecError{`Invalid tag in socket config: "[` + r + `"`}
		}
		if name := r[:end]; len(name) < 1 || len(name) > 8 {
			return "", "", &ListenSpecError{`Listener tags must be between 1 and 8 characters: "` + name + `"`}
		}
		entry = skipOne(r[end+1:])
	}
	return entry, proto, nil
}

// skipOne drops s's first byte, the ':' memcached assumes there.
func skipOne(s string) string {
	if s == "" {
		return s
	}
	return s[1:]
}
