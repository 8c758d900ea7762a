package server

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// reloadCertsOnHangup makes SIGHUP reload -Z's certificate, as memcached
// 1.6.40 and later do (as refresh_certs does), so that a certificate
// rotation needs a signal rather than a client. A failed reload keeps the
// certificate in use and says why on stderr, with memcached's words.
// Without -Z, SIGHUP stays ignored. (memcached also rereads -Y's file on
// SIGHUP, which gocached does not: its file is read once, at start.)
func (s *server) reloadCertsOnHangup() {
	if s.tlsConfig == nil || s.tlsSettings == nil || s.tlsSettings.Certs == nil {
		return
	}
	certs := s.tlsSettings.Certs
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-hup:
				if err := certs.Reload(); err != nil {
					fmt.Fprintf(s.stderr, "Could not reload TLS certificates on SIGHUP: %v\n", err)
					s.log.Error("SIGHUP: certificate not reloaded", "err", err)
					continue
				}
				s.log.Info("SIGHUP: certificate reloaded")
			}
		}
	}()
	s.atExit(func() {
		signal.Ignore(syscall.SIGHUP)
		signal.Stop(hup)
		close(done)
		<-stopped
	})
}
