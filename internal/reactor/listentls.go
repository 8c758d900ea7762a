package reactor

import "strings"

// ListenTLS is how a listener of a TLS server (-Z) serves its clients,
// chosen by memcached's -l prefixes: "notls:" plain text, "btls:" TLS that
// never asks for a client certificate, "mtls:" TLS that requires one the
// CA (-o ssl_ca_cert) signed. Without a prefix, -o ssl_verify_mode
// decides. Without -Z every prefix is refused at start.
type ListenTLS uint8

const (
	ListenTLSDefault ListenTLS = iota // -Z's settings, no prefix
	ListenNoTLS                       // notls:
	ListenBasicTLS                    // btls:
	ListenPeerTLS                     // mtls:
)

// Prefix is the entry's prefix as written, "" for the default.
func (m ListenTLS) Prefix() string {
	switch m {
	case ListenNoTLS:
		return "notls"
	case ListenBasicTLS:
		return "btls"
	case ListenPeerTLS:
		return "mtls"
	}
	return ""
}

// cutTLSPrefix removes entry's TLS prefix. memcached compares the name
// only and skips the character after it unlooked-at, as the ':' it should
// be ("mtlsX127.0.0.1" is "mtls:127.0.0.1").
func cutTLSPrefix(entry string) (string, ListenTLS) {
	for _, m := range []ListenTLS{ListenNoTLS, ListenBasicTLS, ListenPeerTLS} {
		if rest, ok := strings.CutPrefix(entry, m.Prefix()); ok {
			return skipOne(rest), m
		}
	}
	return entry, ListenTLSDefault
}
