package config

import "crypto/tls"

// TLS is -Z and the ssl_* suboptions.
type TLS struct {
	Enabled bool // -Z
	Chain, Key, CA, Ciphers,
	MinVersion string
	VerifyMode   int
	SessionCache bool
}

// minVersions maps ssl_min_version's values (memcached takes 0-3) to Go's.
var minVersions = []struct {
	name    string
	version uint16
}{{"tlsv1.0", tls.VersionTLS10}, {"tlsv1.1", tls.VersionTLS11}, {"tlsv1.2", tls.VersionTLS12}, {"tlsv1.3", tls.VersionTLS13}}

// fromExt reads the ssl_* suboptions, with memcached's defaults.
func (t *TLS) fromExt(settings []extSetting) error {
	t.MinVersion = "tlsv1.2"
	for _, s := range settings {
		switch s.name {
		case "ssl_chain_cert":
			t.Chain = s.value
		case "ssl_key":
			t.Key = s.value
		case "ssl_ca_cert":
			t.CA = s.value
		case "ssl_ciphers":
			t.Ciphers = s.value
		case "ssl_session_cache":
			t.SessionCache = true
		case "ssl_verify_mode":
			n := extInt([]extSetting{s}, s.name, -1)
			if n < 0 || n > 3 {
				return usagef("ssl_verify_mode must be 0 (none), 1 (request), 2 (require) or 3 (once)")
			}
			t.VerifyMode = n
		case "ssl_min_version":
			n := extInt([]extSetting{s}, s.name, -1)
			if n < 0 || n > 3 {
				return usagef("ssl_min_version must be 0 (tlsv1.0) to 3 (tlsv1.3)")
			}
			t.MinVersion = minVersions[n].name
		case "ssl_keyformat":
			if extInt([]extSetting{s}, s.name, 1) != 1 {
				return refusef("ssl_keyformat: gocached reads PEM keys only (1)") // memcached takes DER (2) too
			}
		}
	}
	if t.Enabled && t.Chain == "" {
		return usagef("-Z needs a certificate: -o ssl_chain_cert=FILE[,ssl_key=FILE]")
	}
	return nil
}

// MinTLSVersion is ssl_min_version as crypto/tls names it.
func (t *TLS) MinTLSVersion() uint16 {
	for _, v := range minVersions {
		if v.name == t.MinVersion {
			return v.version
		}
	}
	return 0
}
