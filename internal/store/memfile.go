package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// Warm restart (memcached's -e, Config.MemoryFile).
//
// With a memory file the rings are one shared mapping of that file, so the
// item bytes outlive the process. A graceful stop (SaveState) writes a
// small metadata file next to it, FILE.meta: the settings the records'
// layout depends on, each shard's ring positions and CAS sequence, and a
// checksum of each ring's written bytes. The next start with the same
// settings maps the file, removes the metadata at once (from then on a
// crash leaves no metadata, so a torn file is never trusted), checks the
// checksums, and rebuilds every shard's index by walking its ring from the
// tail. Anything that does not match (no metadata, other settings, a bad
// checksum, a record that does not parse) starts the cache empty and says
// why in RestoreReport; the file is then cleared.

// memfileMeta is FILE.meta. Every field that shapes the rings or the
// records must match for a restore.
type memfileMeta struct {
	Magic        string       `json:"magic"`
	Version      int          `json:"version"`
	MemoryLimit  int64        `json:"memory_limit"`
	MaxItemSize  int          `json:"max_item_size"`
	DisableCAS   bool         `json:"disable_cas"`
	GrowthFactor float64      `json:"growth_factor"`
	MinChunk     int          `json:"min_chunk"`
	RingSize     int          `json:"ring_size"`
	Shards       []shardState `json:"shards"`
	SavedAt      int64        `json:"saved_at"`
	Items        int          `json:"items"`
	HashPower    uint32       `json:"hash_power,omitempty"` // the level reached, kept as memcached keeps it
	Started      int64        `json:"started,omitempty"`    // the first start of the cache, as memcached keeps process_started
}

// shardState is one shard's ring positions as SaveState found them.
type shardState struct {
	Head, Tail, End int
	Wrapped         bool
	Touched         int
	Seq             uint64
	FlushOldest     uint32 // a pending delayed flush_all (flushPending)
	FlushLive       uint32 // the flush in force (flushLive, flushCAS): flushed items stay unmet
	FlushCAS        uint64
	Sum             string // xxhash of buf[:Touched], hex
}

const (
	memfileMagic   = "gocached-memory-file"
	memfileVersion = 1
	memfilePage    = 4096
)

func metaPath(file string) string { return file + ".meta" }

// matches reports whether m was saved by a store with this configuration.
func (m *memfileMeta) matches(cfg Config, ringSize int) error {
	switch {
	case m.Magic != memfileMagic || m.Version != memfileVersion:
		return fmt.Errorf("metadata format %q v%d is not this version's", m.Magic, m.Version)
	// The settings in the order memcached's metadata lists them, which
	// decides the one its message names.
	case m.GrowthFactor != cfg.GrowthFactor:
		return &settingMismatch{"slab_config", savedFactor(m.GrowthFactor), "saved with other -f/-n size classes"}
	case m.MemoryLimit != cfg.MemoryLimit:
		return &settingMismatch{"maxbytes", strconv.FormatInt(m.MemoryLimit, 10),
			fmt.Sprintf("saved with -m %d MB, now %d MB", m.MemoryLimit>>20, cfg.MemoryLimit>>20)}
	case m.MinChunk != cfg.MinChunk:
		return &settingMismatch{"chunk_size", savedMinChunk(m.MinChunk), "saved with other -f/-n size classes"}
	case m.MaxItemSize != cfg.MaxItemSize:
		return &settingMismatch{"item_size_max", strconv.Itoa(m.MaxItemSize),
			fmt.Sprintf("saved with -I %d, now %d", m.MaxItemSize, cfg.MaxItemSize)}
	case m.DisableCAS != cfg.DisableCAS:
		return &settingMismatch{"use_cas", strconv.FormatBool(!m.DisableCAS), "saved with another -C setting"}
	case m.RingSize != ringSize || len(m.Shards) == 0 || len(m.Shards)&(len(m.Shards)-1) != 0:
		return errors.New("saved with another ring layout")
	}
	return nil
}

// errCorruptMeta is an empty or unparsable FILE.meta: New refuses to start,
// as memcached aborts ("corrupt metadata file").
var errCorruptMeta = errors.New("corrupt metadata file")

// readMemfileMeta loads FILE.meta; a missing file is (nil, nil).
func readMemfileMeta(file string) (*memfileMeta, error) {
	b, err := os.ReadFile(metaPath(file))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m memfileMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w %s (remove it to start empty): %v", errCorruptMeta, metaPath(file), err)
	}
	return &m, nil
}

// memfileRingSize is a shard's ring size with a memory file: whole pages,
// so that each ring is its own page range of the mapping and can be
// unmapped alone when SetMemoryLimit replaces it.
func memfileRingSize(limit int64, shards int) int {
	return int(limit/int64(shards)) &^ (memfilePage - 1)
}

// SaveState writes the metadata that lets the next start with the same
// memory file serve the items stored now (memcached's graceful stop with
// -e). Call it once the server no longer changes the store: after the
// engine stopped. It stops the background reclaimer (Close). It fails when there is no memory file, or when a ring was
// replaced at run time (cache_memlimit) and so no longer lives in it.
func (s *Store) SaveState() error {
	mf := s.memfile
	if mf == nil {
		return errors.New("store: no memory file")
	}
	// The reclaimer must not change a ring after its checksum is taken.
	s.Close()
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	m := memfileMeta{Magic: memfileMagic, Version: memfileVersion, MemoryLimit: s.cfg.MemoryLimit,
		MaxItemSize: s.cfg.MaxItemSize, DisableCAS: s.cfg.DisableCAS, GrowthFactor: s.cfg.GrowthFactor,
		MinChunk: s.cfg.MinChunk, RingSize: s.ringSize, SavedAt: s.Now(), HashPower: s.hashPower.Load(), Started: s.started}
	for i := range s.shards {
		sh := &s.shards[i]
		if !mf.holds(sh.buf, i) {
			return errors.New("store: a ring was resized at run time and is not in the memory file; not saved")
		}
		m.Items += sh.idx.count
		m.Shards = append(m.Shards, shardState{Head: sh.head, Tail: sh.tail, End: sh.end, Wrapped: sh.wrapped,
			Touched: sh.touched, Seq: sh.seq, FlushOldest: sh.flushPending,
			FlushLive: sh.flushLive, FlushCAS: sh.flushCAS, Sum: ringSum(sh.buf[:sh.touched])})
	}
	if err := mf.sync(); err != nil {
		return fmt.Errorf("store: sync %s: %w", mf.path, err)
	}
	b, err := json.Marshal(&m)
	if err != nil {
		return err
	}
	tmp := metaPath(mf.path) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	_, werr := f.Write(b)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, metaPath(mf.path)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: %w", err)
	}
	s.restoreNote = fmt.Sprintf("saved %d items to %s", m.Items, mf.path)
	return nil
}

// adoptMemoryFile restores the items the file holds when saved describes
// them, and otherwise starts empty; either way the metadata is removed
// before anything is served, so that only a later SaveState can vouch for
// the file again.
func (s *Store) adoptMemoryFile(saved *memfileMeta, readErr error) {
	path := s.memfile.path
	var why string
	items := 0
	switch {
	case readErr != nil:
		why = readErr.Error()
	case saved == nil:
		why = "no saved state (a first start, or the last stop was not a graceful one)"
		s.restartLines = []string{restartNoMeta}
	default:
		if err := saved.matches(s.cfg, s.ringSize); err != nil {
			why = err.Error()
			if m := (*settingMismatch)(nil); errors.As(err, &m) {
				s.restartLines = m.lines()
			}
		} else if items, err = s.restore(saved); err != nil {
			why = err.Error()
		}
	}
	if err := os.Remove(metaPath(path)); err != nil && !errors.Is(err, os.ErrNotExist) && why == "" {
		why = "cannot remove the metadata, so a crash could not be told from a clean stop: " + err.Error()
	}
	if why != "" {
		if s.restartLines == nil { // a failure memcached's check has no line of its own for
			s.restartLines = []string{restartInvalid}
		}
		s.emptyAll()
		s.started = s.cfg.Started // an empty cache starts now
		s.memfile.clear()
		s.restoreNote = fmt.Sprintf("memory file %s: starting empty: %s", path, why)
		return
	}
	s.restoreNote = fmt.Sprintf("memory file %s: restored %d items saved at %d", path, items, saved.SavedAt)
}

// RestoreReport says what the memory file gave at start ("" without one):
// how many items were restored, or why the cache started empty.
func (s *Store) RestoreReport() string { return s.restoreNote }

func ringSum(b []byte) string { return strconv.FormatUint(xxhash.Sum64(b), 16) }

// restore adopts the rings' records as m describes them. On any mismatch
// it leaves every shard empty and returns why.
func (s *Store) restore(m *memfileMeta) (items int, err error) {
	if len(m.Shards) != len(s.shards) {
		return 0, errors.New("shard count differs")
	}
	for i, st := range m.Shards {
		n := len(s.shards[i].buf)
		if st.Touched < 0 || st.Touched > n || st.Head < 0 || st.Head > n || st.Tail < 0 || st.Tail > n ||
			st.End < 0 || st.End > n || st.Head%8 != 0 || st.Tail%8 != 0 {
			return 0, fmt.Errorf("shard %d: ring positions out of range", i)
		}
		if ringSum(s.shards[i].buf[:st.Touched]) != st.Sum {
			return 0, fmt.Errorf("shard %d: checksum mismatch (the file changed after the save)", i)
		}
	}
	for i, st := range m.Shards {
		sh := &s.shards[i]
		sh.head, sh.tail, sh.end, sh.wrapped, sh.touched = st.Head, st.Tail, st.End, st.Wrapped, st.Touched
		sh.seq, sh.flushPending, sh.flushLive, sh.flushCAS = st.Seq, st.FlushOldest, st.FlushLive, st.FlushCAS
		if sh.flushLive != 0 {
			sh.flushSweepAt = 1 // flushed items saved unmet: the reclaimer may sweep them now
		}
		// Virtual positions as cursor.go derives them from physical ones:
		// the head in its second lap, the tail one lap behind when the
		// records wrap.
		sh.vhead = uint64(len(sh.buf) + sh.head)
		sh.vtail = sh.bornOf(sh.tail)
		if err := relinkAll(sh); err != nil {
			s.emptyAll()
			return 0, fmt.Errorf("shard %d: %w", i, err)
		}
		items += sh.idx.count
		// memcached's restart links each item it finds again, counting it
		// as linked in total_items.
		sh.st.TotalItems += uint64(sh.idx.count)
	}
	if m.HashPower > 0 && m.HashPower <= maxHashPower {
		s.hashPower.Store(m.HashPower) // memcached restarts at the level it had reached
	}
	if m.Started != 0 {
		s.started = m.Started // uptime goes on from the first start, as memcached's process_started
	}
	return items, nil
}

// relinkAll walks sh's ring from the tail and indexes every live record,
// checking that each one parses and that no key appears twice.
func relinkAll(sh *shard) error {
	walk := func(from, to int) error {
		for pos := from; pos < to; {
			if to-pos < recHeader {
				return fmt.Errorf("record at %d runs past %d", pos, to)
			}
			r := sh.rec(pos)
			sz := r.size()
			if r.klen() == 0 || pos+sz > to || r.class() >= len(sh.cls) {
				return fmt.Errorf("record at %d does not parse", pos)
			}
			if r.bits()&recDead == 0 {
				h := xxhash.Sum64(r.key())
				if sh.find(r.key(), tagOf(h)) >= 0 {
					return fmt.Errorf("key at %d stored twice", pos)
				}
				sh.link(-1, tagOf(h), pos)
			}
			pos += sz
		}
		return nil
	}
	var err error
	if sh.wrapped {
		if err = walk(sh.tail, sh.end); err == nil {
			err = walk(0, sh.head)
		}
	} else {
		err = walk(sh.tail, sh.head)
	}
	return err
}

// emptyAll forgets every record of every shard (a restore that failed).
func (s *Store) emptyAll() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.idx.clear()
		sh.head, sh.tail, sh.end, sh.wrapped, sh.touched = 0, 0, 0, false, 0
		sh.vhead, sh.vtail = 0, 0 // nothing can hold a ValueRef yet
		sh.live, sh.expiring, sh.seq = 0, 0, 0
		// A start empties: what restore counted as linked is gone again
		// (nothing else has been counted before serving).
		sh.st.TotalItems = 0
		sh.flushPending, sh.flushLive, sh.flushCAS, sh.flushSweepAt = 0, 0, 0, 0
		for c := range sh.cls {
			sh.cls[c] = classCounters{}
		}
	}
	if h := s.sizes.Load(); h != nil {
		for b := range h.counts {
			h.counts[b].Store(0)
		}
	}
}
