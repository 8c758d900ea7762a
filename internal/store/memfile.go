package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/gocached/gocached/internal/extstore"
)

// Warm restart (memcached's -e, Config.MemoryFile).
//
// With a memory file the arena is a shared mapping of that file, so the
// item bytes outlive the process. A graceful stop (SaveState) writes a
// small metadata file next to it, FILE.meta: the settings the records'
// layout depends on, the owner of each page, each class's partly cut
// page, each shard's CAS sequence and flush state, and a checksum of the
// pages. The next start with the same settings maps the file, removes the
// metadata at once (from then on a crash leaves no metadata, so a torn
// file is never trusted), checks the checksum, and walks every page:
// each chunk holding a record goes back in its shard's index and its
// class's queue, each other chunk on its class's free list. Anything
// that does not match (no metadata, other settings, a bad checksum, a
// record that does not parse) starts the cache empty and says why in
// RestoreReport; the file is then cleared.

// memfileMeta is FILE.meta. Every field that shapes the pages or the
// records must match for a restore.
type memfileMeta struct {
	Magic        string       `json:"magic"`
	Version      int          `json:"version"`
	MemoryLimit  int64        `json:"memory_limit"`
	MaxItemSize  int          `json:"max_item_size"`
	DisableCAS   bool         `json:"disable_cas"`
	GrowthFactor float64      `json:"growth_factor"`
	MinChunk     int          `json:"min_chunk"`
	Pages        int          `json:"pages"` // the arena's size in pages
	Front        int          `json:"front"` // pages cut from the front
	Owners       []byte       `json:"owners"`
	Pool         []int32      `json:"pool"`
	Carves       []carveState `json:"carves"` // by class id
	Sum          string       `json:"sum"`    // xxhash of the pages cut from the front, hex
	Shards       []shardState `json:"shards"`
	SavedAt      int64        `json:"saved_at"`
	Items        int          `json:"items"`
	HashPower    uint32       `json:"hash_power,omitempty"` // the level reached, kept as memcached keeps it
	Started      int64        `json:"started,omitempty"`    // the first start of the cache, as memcached keeps process_started
	// Flash is the flash tier's pages in use (memfile_flash.go); nil
	// without ext_path.
	Flash *extstore.State `json:"flash,omitempty"`
}

// shardState is one shard's state as SaveState found it.
type shardState struct {
	Seq         uint64
	FlushOldest uint32 // a pending delayed flush_all (flushPending)
	FlushLive   uint32 // the flush in force (flushLive, flushCAS): flushed items stay unmet
	FlushCAS    uint64
}

// carveState is a class's partly cut page.
type carveState struct {
	Carve uint64
	Left  int
}

const (
	memfileMagic   = "gocached-memory-file"
	memfileVersion = 2
)

func metaPath(file string) string { return file + ".meta" }

// matches reports whether m was saved by a store with this configuration.
func (m *memfileMeta) matches(cfg Config, pages int) error {
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
	case m.Pages != pages || len(m.Shards) == 0 || len(m.Shards)&(len(m.Shards)-1) != 0 ||
		m.Front < 0 || m.Front > pages || len(m.Owners) != m.Front:
		return errors.New("saved with another page layout")
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

// memfilePages is the arena's size in pages with a memory file: the
// limit and a page per class beyond it, no room to grow.
func memfilePages(limit int64) int { return limitPages(limit) + arenaSlack/pageSize }

// SaveState writes the metadata that lets the next start with the same
// memory file serve the items stored now (memcached's graceful stop with
// -e). Call it once the server no longer changes the store: after the
// engine stopped. It stops the background reclaimer (Close). It fails
// when there is no memory file.
func (s *Store) SaveState() error {
	mf := s.memfile
	if mf == nil {
		return errors.New("store: no memory file")
	}
	// The background loop and the page mover must not change a page
	// after its checksum is taken.
	s.Close()
	flash, err := s.saveFlash()
	if err != nil {
		return err
	}
	s.mover.mu.Lock()
	defer s.mover.mu.Unlock()
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	a := s.slabs.arena
	m := memfileMeta{Magic: memfileMagic, Version: memfileVersion, MemoryLimit: s.cfg.MemoryLimit,
		MaxItemSize: s.cfg.MaxItemSize, DisableCAS: s.cfg.DisableCAS, GrowthFactor: s.cfg.GrowthFactor,
		MinChunk: s.cfg.MinChunk, SavedAt: s.Now(), HashPower: s.hashPower.Load(), Started: s.started, Flash: flash}
	a.mu.Lock()
	m.Pages, m.Front = a.pages(), a.front
	m.Owners = append([]byte(nil), a.owner[:a.front]...)
	m.Pool = append([]int32(nil), a.pool...)
	a.mu.Unlock()
	for id := range s.slabs.classes {
		c := &s.slabs.classes[id]
		c.mu.Lock()
		m.Carves = append(m.Carves, carveState{Carve: c.carve, Left: c.carveLeft})
		c.mu.Unlock()
	}
	for i := range s.shards {
		sh := &s.shards[i]
		m.Items += sh.idx.count
		m.Shards = append(m.Shards, shardState{Seq: sh.seq, FlushOldest: sh.flushPending,
			FlushLive: sh.flushLive, FlushCAS: sh.flushCAS})
	}
	m.Sum = pagesSum(a.mem[:m.Front*pageSize])
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
	s.restoreNote = fmt.Sprintf("saved %d items to %s", m.Items, mf.path) + s.savedFlashNote()
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
		if err := saved.matches(s.cfg, s.slabs.arena.pages()); err != nil {
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
		if err := s.finishFlashRestore(false); err != nil {
			s.restoreNote += "; " + err.Error()
		}
		return
	}
	s.restoreNote = fmt.Sprintf("memory file %s: restored %d items saved at %d", path, items, saved.SavedAt) + s.flashNote()
}

// RestoreReport says what the memory file gave at start ("" without one):
// how many items were restored, or why the cache started empty.
func (s *Store) RestoreReport() string { return s.restoreNote }

func pagesSum(b []byte) string { return strconv.FormatUint(xxhash.Sum64(b), 16) }

// restore adopts the pages' records as m describes them. On any mismatch
// it leaves every shard empty and returns why.
func (s *Store) restore(m *memfileMeta) (items int, err error) {
	a := s.slabs.arena
	switch {
	case len(m.Shards) != len(s.shards):
		return 0, errors.New("shard count differs")
	case len(m.Carves) != len(s.slabs.classes):
		return 0, errors.New("class count differs")
	case pagesSum(a.mem[:m.Front*pageSize]) != m.Sum:
		return 0, errors.New("checksum mismatch (the file changed after the save)")
	}
	for i, st := range m.Shards {
		sh := &s.shards[i]
		sh.seq, sh.flushPending, sh.flushLive, sh.flushCAS = st.Seq, st.FlushOldest, st.FlushLive, st.FlushCAS
		if sh.flushLive != 0 {
			sh.flushSweepAt = 1 // flushed items saved unmet: the reclaimer may sweep them now
		}
	}
	s.startFlashRestore(m)
	if err := s.adoptPages(m); err != nil {
		s.emptyAll()
		return 0, err
	}
	if err := s.finishFlashRestore(true); err != nil {
		return 0, err
	}
	for i := range s.shards {
		sh := &s.shards[i]
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

// adoptPages gives the arena and the classes their saved pages and links
// every record in them, checking that each parses and that no key appears
// twice.
func (s *Store) adoptPages(m *memfileMeta) error {
	a, sl := s.slabs.arena, s.slabs
	a.front = m.Front
	copy(a.owner, m.Owners)
	for _, p := range m.Pool {
		if p < 0 || int(p) >= m.Front || a.owner[p] != 0 {
			return errors.New("page pool does not parse")
		}
	}
	a.pool = append(a.pool[:0], m.Pool...)
	inPool := make(map[int32]bool, len(a.pool))
	for _, p := range a.pool {
		inPool[p] = true
	}
	for p := range m.Front {
		if a.owner[p] == 0 && !inPool[int32(p)] {
			a.released = append(a.released, int32(p))
		}
	}
	a.malloced = m.Front - len(a.released)
	for id, cs := range m.Carves {
		if id == 0 {
			continue
		}
		c := &sl.classes[id]
		if cs.Left < 0 || cs.Left > c.perPage || cs.Left > 0 && (cs.Carve >= uint64(m.Front)*pageSize ||
			int(cs.Carve/pageSize) != int((cs.Carve+uint64(cs.Left*c.size)-1)/pageSize) ||
			a.owner[cs.Carve/pageSize] != uint8(id)) {
			return fmt.Errorf("class %d: cut page does not parse", id)
		}
		c.carve, c.carveLeft = cs.Carve, cs.Left
	}
	for p := 0; p < m.Front; p++ {
		o := a.owner[p]
		switch {
		case o == 0:
			continue
		default:
			if int(o) >= len(sl.classes) {
				return fmt.Errorf("page %d: owner does not parse", p)
			}
			c := &sl.classes[o]
			c.pages++
			c.pageList = append(c.pageList, int32(p))
			if err := s.adoptPage(c, p); err != nil {
				return err
			}
		}
	}
	s.freeStrayLinks()
	return nil
}

// freeStrayLinks frees the chain links no restored head holds: those of
// a value that was still arriving when the cache was saved.
func (s *Store) freeStrayLinks() {
	sl := s.slabs
	c := sl.largest()
	held := map[uint64]bool{}
	for qi := range c.q {
		for pos := c.q[qi].head; pos != nilLoc; pos = sl.rec(pos).next() {
			if r := sl.rec(pos); sl.chained(r) {
				for l := sl.firstLink(r); l != nilLoc; l = sl.rec(l).next() {
					held[l] = true
				}
			}
		}
	}
	for _, p := range c.pageList {
		start := uint64(p) * pageSize
		for i := range c.cutChunks(p) {
			pos := start + uint64(i*c.size)
			if r := sl.rec(pos); r.bits() == recChunk && r.queue() == queueChunk && !held[pos] {
				sl.pushFree(c, pos)
			}
		}
	}
}

// cutChunks is how many chunks of page p of c have been handed out at
// some time: all of them, or up to the cut point of c's newest page.
func (c *slabClass) cutChunks(p int32) int {
	if c.carveLeft > 0 && c.carve/pageSize == uint64(p) {
		return int(c.carve-uint64(p)*pageSize) / c.size
	}
	return c.perPage
}

// adoptPage links the records of one class page and frees its other
// chunks, up to the class's cut point when this is its newest page.
func (s *Store) adoptPage(c *slabClass, p int) error {
	start := uint64(p) * pageSize
	for i := range c.cutChunks(int32(p)) {
		pos := start + uint64(i*c.size)
		r := s.slabs.rec(pos)
		switch {
		case r.bits()&recDead != 0:
			s.slabs.pushFree(c, pos)
			continue
		case r.bits() == recChunk:
			continue // a chain's link: its head accounts for it
		case r.flash() && !s.adoptFlashHeader(r):
			s.slabs.pushFree(c, pos) // its value is not on a restored page
			continue
		}
		if err := s.relink(c, int(pos)); err != nil {
			return err
		}
	}
	return nil
}

// relink indexes the record at pos, and queues it in class c; a chain's
// head brings its links (checked to be c's, ending where its length says).
func (s *Store) relink(c *slabClass, pos int) error {
	r := s.slabs.rec(uint64(pos))
	size := r.size()
	if r.flash() { // its value is on flash: the chunk holds a Location
		size = recSize(r.klen(), flashLocSize)
	}
	if r.klen() == 0 || r.class() != c.id || size > c.size && !s.slabs.chained(r) {
		return fmt.Errorf("record at %d does not parse", pos)
	}
	if s.slabs.chained(r) {
		if err := s.checkChain(c, uint64(pos), r); err != nil {
			return err
		}
	}
	h := xxhash.Sum64(r.key())
	sh := &s.shards[h&s.shardMask]
	if sh.find(r.key(), tagOf(h)) >= 0 {
		return fmt.Errorf("key at %d stored twice", pos)
	}
	sh.link(-1, tagOf(h), pos)
	return nil
}

// checkChain checks that the links of the chain whose head r is at pos
// are c's, name it as their head and hold the rest of its value.
func (s *Store) checkChain(c *slabClass, pos uint64, r rec) error {
	sl := s.slabs
	need := r.vlen() - min(r.vlen(), sl.headRoom(r.klen()))
	limit := uint64(sl.arena.front) * pageSize
	for link, k := sl.firstLink(r), 0; need > 0; k++ {
		if link == nilLoc || link >= limit || k > sl.chainLinks(r.klen(), r.vlen()) {
			return fmt.Errorf("chain at %d does not parse", pos)
		}
		l := sl.rec(link)
		if l.bits() != recChunk || l.queue() != queueChunk || l.prev() != pos || l.class() != c.id || l.vlen() > need {
			return fmt.Errorf("chain at %d: link at %d does not parse", pos, link)
		}
		need -= l.vlen()
		link = l.next()
	}
	return nil
}

// emptyAll forgets every record of every shard and every page (a restore
// that failed).
func (s *Store) emptyAll() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.idx.clear()
		sh.expiring, sh.seq = 0, 0
		// A start empties: what restore counted as linked is gone again
		// (nothing else has been counted before serving).
		sh.st.TotalItems = 0
		sh.flushPending, sh.flushLive, sh.flushCAS, sh.flushSweepAt = 0, 0, 0, 0
		for c := range sh.cls {
			sh.cls[c] = classCounters{}
		}
	}
	sl := s.slabs
	for id := 1; id < len(sl.classes); id++ {
		c := &sl.classes[id]
		*c = slabClass{id: c.id, size: c.size, perPage: c.perPage, largest: c.largest, free: nilLoc}
		for i := range c.q {
			c.q[i] = lruQueue{head: nilLoc, tail: nilLoc}
		}
	}
	a := sl.arena
	a.front, a.malloced, a.pool, a.released = 0, 0, a.pool[:0], a.released[:0]
	clear(a.owner)
	if h := s.sizes.Load(); h != nil {
		for b := range h.counts {
			h.counts[b].Store(0)
		}
	}
}
