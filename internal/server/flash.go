package server

import (
	"errors"
	"fmt"

	"github.com/gocached/gocached/internal/extstore"
	"github.com/gocached/gocached/internal/store"
)

// openFlash opens extstore's files when -o ext_path is given, as the -u
// user (memcached, already that user, opens them in storage_init), and
// returns what the store needs; nil without ext_path. A file that cannot
// be opened, locked or sized fails the start with memcached's lines.
func (s *server) openFlash() (*store.FlashConfig, error) {
	f := s.o.Ext.Flash
	if f == nil {
		return nil, nil
	}
	cfg := f.Engine
	// With -e the files keep their pages until the store has read the
	// memory file: it restores them with the cache, or discards them.
	cfg.Keep = s.o.MemoryFile != ""
	var eng *extstore.Engine
	err := s.proc.AsUser(func() error {
		var err error
		eng, err = extstore.Open(cfg)
		return err
	})
	if err != nil {
		var se *extstore.StartError
		if errors.As(err, &se) {
			fmt.Fprintln(s.stderr, se.Message)
			s.cannotStart(err)
			return nil, exit(se.ExitCode)
		}
		return nil, s.cannotStart(err)
	}
	// Registered before the store's Close, so it runs after it: the store
	// stops writing to the engine first.
	s.atExit(func() { eng.Close() })
	return &store.FlashConfig{
		Engine:      eng,
		Policy:      f.Policy,
		ItemSize:    f.ItemSize,
		ItemAge:     f.ItemAge,
		LowTTL:      f.LowTTL,
		RecacheRate: f.RecacheRate,
		MaxSleep:    f.MaxSleep,
	}, nil
}
