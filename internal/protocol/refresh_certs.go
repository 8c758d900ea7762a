package protocol

import "strings"

// refreshCerts is memcached's `refresh_certs`: reload -Z's certificate and
// key from their files without a restart. Connections already up keep the
// certificate they were made with.
func (s *Session) refreshCerts() {
	t := s.env.Settings.TLS
	switch {
	case t == nil || t.Certs == nil:
		s.out = append(s.out, "Error TLS not enabled\r\n"...)
	default:
		if err := t.Certs.Reload(); err != nil {
			// memcached: the file it was loading, then the library's reason.
			msg := strings.ReplaceAll(err.Error(), "\n", " ")
			s.out = append(s.out, "Error loading the certificate chain: "+t.ChainCert+" : "+msg+"\r\n"...)
			return
		}
		s.out = append(s.out, "OK\r\n"...)
	}
}
