package server

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/gocached/gocached/internal/config"
	"github.com/gocached/gocached/internal/store"
)

// buildStore makes the cache from -m, -I, -f, -n, -L, -e and -o (with
// extstore's files, opened first), warm from -e's file when the last stop
// saved it, and prints memcached's start-up lines about it.
func (s *server) buildStore() error {
	o, log, stderr := s.o, s.log, s.stderr
	flash, err := s.openFlash()
	if err != nil {
		return err
	}
	st, err := s.newStore(store.Config{
		MemoryLimit:      o.Memory,
		MaxItemSize:      o.ItemSize,
		DisableEvictions: o.NoEvict,
		DisableCAS:       o.NoCAS,
		GrowthFactor:     o.Gates.Factor,
		SlabChunkMax:     o.Ext.SlabChunkMax,
		SlabSizes:        o.Ext.SlabSizes, // -o slab_sizes: the classes `stats slabs` shows
		MinChunk:         o.Gates.MinChunk,
		LargePages:       o.LargePages,
		MemoryFile:       o.MemoryFile,
		// -o hashpower / no_hashexpand: the level `stats` reports as
		// hash_power_level starts there and, unless told not to, grows
		// as memcached's table would.
		HashPower:    o.Ext.HashPower,
		NoHashExpand: o.Ext.NoHashExpand,
		TrackSizes:   o.Ext.TrackSizes, // `stats sizes` from the start
		// Without memcached's segmented LRU one read protects an item.
		PlainLRU:    o.Ext.PlainLRU,
		CrawlerOff:  o.Ext.LRUCrawlerOff, // expired items stay until met
		Premalloced: initialMalloc(log),
		Started:     time.Now().Unix(),
		Flash:       flash, // -o ext_path: cold values on flash
	})
	if err != nil {
		log.Error("cannot create the store", "err", err)
		return exit(1)
	}
	s.st = st
	s.atExit(func() { st.Close() })
	tu := o.Ext.Tuning
	if tu.SlabReassign {
		st.SetAutomove(tu.SlabAutomove, tu.AutomoveRatio, int(tu.AutomoveWindow))
	}
	st.SetLRUTuning(tu.HotPct, tu.WarmPct, tu.HotFactor, tu.WarmFactor, o.Ext.PlainLRU)
	// memcached's restart check runs before its slabs_init.
	for _, l := range st.RestartLines() { // whatever -v says, as memcached
		fmt.Fprintln(stderr, l)
	}
	if o.Verbosity >= 2 { // memcached's slabs_init lines, before it listens
		printSlabClasses(stderr, st)
	}
	if msg := config.LockTableRefusal(o.Ext.HashPower, o.MemcachedThreads()); msg != "" {
		fmt.Fprint(stderr, msg)
		return exit(1)
	}
	// -o temporary_ttl turns memcached's TEMP LRU on: items stored with at
	// most that many seconds to live are never evicted.
	if o.Ext.HasTemporaryTTL {
		st.SetTemporaryTTL(o.Ext.TemporaryTTL)
	}
	if rep := st.RestoreReport(); rep != "" {
		log.Info(rep)
	}
	if w := st.FlashRestoreWarning(); w != "" { // -e with an ext_path other than the one saved
		log.Warn(w)
	}
	s.started = st.Started()
	return nil
}

// newStore makes the store; -e's file and its FILE.meta are read, opened
// and removed as the -u user, as memcached, already that user, does: root
// may have neither CAP_DAC_OVERRIDE nor CAP_CHOWN (Debian's unit).
func (s *server) newStore(cfg store.Config) (st *store.Store, err error) {
	if cfg.MemoryFile == "" {
		return store.New(cfg)
	}
	err = s.proc.AsUser(func() error {
		st, err = store.New(cfg)
		return err
	})
	return st, err
}

// printSlabClasses writes memcached's -vv start-up lines, one per size
// class: "slab class   1: chunk size        96 perslab   10922".
func printSlabClasses(w io.Writer, st *store.Store) {
	sizes, perPage := st.ClassSizes()
	for i, size := range sizes {
		fmt.Fprintf(w, "slab class %3d: chunk size %9d perslab %7d\n", i+1, size, perPage[i])
	}
}

// saveMemoryFile keeps the cache in -e's file for the next start when the
// stop was graceful; any other stop leaves no metadata, so the next start
// is empty.
func saveMemoryFile(o *config.Options, st *store.Store, graceful bool, log *slog.Logger) {
	if o.MemoryFile == "" {
		return
	}
	if !graceful {
		log.Info("memory file not saved: only a graceful stop (SIGUSR1) saves the cache", "file", o.MemoryFile)
		return
	}
	if err := st.SaveState(); err != nil {
		log.Error("memory file not saved", "file", o.MemoryFile, "err", err)
		return
	}
	log.Info(st.RestoreReport())
}
