package protocol

import (
	"strconv"

	"github.com/gocached/gocached/internal/store"
)

// The deletions watcher (`watch deletions`, memcached 1.6.20 on): a line
// for each item a text delete or a meta delete removes, in memcached's
// format: "ts=... gid=... type=deleted key=k cmd=delete clsid=1 size=4".
// Misses, CAS mismatches and md's invalidation (I) are not logged; binary
// deletes are not either, as in memcached.

// Commands named in a deleted line.
const (
	deletedByText = "delete"
	deletedByMeta = "md"
)

// deleteLogged runs a meta delete, logging what it removed when someone
// watches deletions. The item's class and size are read just before: the
// line describes the item as it was found.
func (s *Session) deleteLogged(key []byte, req store.DeleteRequest, cmd string) store.Result {
	if s.env.watching()&logDeletions == 0 {
		return s.env.Store.DeleteItem(key, req)
	}
	class, size := s.itemShape(key)
	res := s.env.Store.DeleteItem(key, req)
	if res == store.Stored && !req.Invalidate {
		s.logDeletionOf(key, cmd, class, size)
	}
	return res
}

// deleteTextLogged is deleteLogged for the text delete.
func (s *Session) deleteTextLogged(key []byte) bool {
	if s.env.watching()&logDeletions == 0 {
		return s.env.Store.Delete(key)
	}
	class, size := s.itemShape(key)
	deleted := s.env.Store.Delete(key)
	if deleted {
		s.logDeletionOf(key, deletedByText, class, size)
	}
	return deleted
}

// itemShape returns the class and value length of the item under key.
func (s *Session) itemShape(key []byte) (class, size int) {
	s.env.Store.View(key, func(it store.Item) { class, size = it.Class(), it.ValueLen() })
	return class, size
}

// logDeletion logs the removal of an item of size bytes whose class is
// the one such an item gets (md x leaves an empty item: size 0).
func (s *Session) logDeletion(key []byte, cmd string, size int) {
	class, _ := s.itemShape(key)
	s.logDeletionOf(key, cmd, class, size)
}

func (s *Session) logDeletionOf(key []byte, cmd string, class, size int) {
	h := &s.env.logs
	b := h.logHeader(s.log.line[:0])
	b = append(b, "type=deleted key="...)
	b = appendURIEncoded(b, key)
	b = append(b, " cmd="...)
	b = append(b, cmd...)
	b = append(b, " clsid="...)
	b = strconv.AppendInt(b, int64(class), 10)
	b = append(b, " size="...)
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, '\n')
	s.log.line = b
	h.publish(logDeletions, b)
}
