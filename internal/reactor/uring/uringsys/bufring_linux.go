//go:build linux

package uringsys

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BufRing is a provided-buffer Ring (IORING_REGISTER_PBUF_RING, 5.19+):
// the kernel picks a buffer from it for each receive completion,
// so a reactor needs read memory for what is in flight, not for every idle
// connection. Both the ring of descriptors and the buffers are mmapped:
// the kernel holds their addresses, so they must never move and never be
// freed by the garbage collector while the ring lives.
type BufRing struct {
	descs   []byte // entries * 16-byte struct io_uring_buf
	mem     []byte // entries * size bytes of buffers
	size    int
	entries uint16
	mask    uint16
	tail    uint16 // ours; published to the kernel by publish
	bgid    uint16
}

// bufDesc is struct io_uring_buf. The ring's tail is the resv field of
// descriptor 0, which the kernel never reads as part of a buffer.
type bufDesc struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// NewBufRing maps a Ring of entries (a power of two, at most 32768)
// buffers of size bytes each and fills it.
func NewBufRing(entries, size int, bgid uint16) (*BufRing, error) {
	if entries <= 0 || entries > 1<<15 || entries&(entries-1) != 0 {
		return nil, fmt.Errorf("buffer Ring entries %d: want a power of two up to 32768", entries)
	}
	b := &BufRing{size: size, entries: uint16(entries), mask: uint16(entries - 1), bgid: bgid}
	var err error
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE
	if b.descs, err = unix.Mmap(-1, 0, entries*int(unsafe.Sizeof(bufDesc{})), prot, flags|unix.MAP_POPULATE); err != nil {
		return nil, fmt.Errorf("mmap buffer ring: %w", err)
	}
	// The buffers are touched on first use only: an idle reactor stays small.
	if b.mem, err = unix.Mmap(-1, 0, entries*size, prot, flags); err != nil {
		b.Free()
		return nil, fmt.Errorf("mmap receive buffers: %w", err)
	}
	for i := range entries {
		b.Recycle(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Register makes b buffer group bgid of the ring.
func (b *BufRing) Register(ringFD int) error {
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&b.descs[0]))), ringEntries: uint32(b.entries), bgid: b.bgid}
	_, err := Register(ringFD, RegisterPbufRing, unsafe.Pointer(&reg), 1)
	return err
}

func (b *BufRing) desc(i uint16) *bufDesc {
	return (*bufDesc)(unsafe.Pointer(&b.descs[int(i)*int(unsafe.Sizeof(bufDesc{}))]))
}

// Buf is the first n bytes of buffer id, as a completion reported them.
func (b *BufRing) Buf(id uint16, n int) []byte {
	off := int(id) * b.size
	return b.mem[off : off+min(n, b.size) : off+b.size]
}

// Recycle gives buffer id back to the kernel (visible after publish). The
// caller must be done with its bytes.
func (b *BufRing) Recycle(id uint16) {
	d := b.desc(b.tail & b.mask)
	d.addr = uint64(uintptr(unsafe.Pointer(&b.mem[int(id)*b.size])))
	d.len = uint32(b.size)
	d.bid = id
	b.tail++
}

// Publish stores the tail with release semantics so the kernel sees every
// descriptor written before it. The tail is a 16-bit field; Go has no
// 16-bit atomics, so the 32-bit word it shares with descriptor 0's bid is
// stored whole, with that bid as we last wrote it (only we write it).
func (b *BufRing) Publish() {
	word := (*uint32)(unsafe.Pointer(&b.descs[12]))
	var w [4]byte
	copy(w[:2], b.descs[12:14])
	*(*uint16)(unsafe.Pointer(&w[2])) = b.tail
	atomic.StoreUint32(word, *(*uint32)(unsafe.Pointer(&w[0])))
}

// Published is the tail as the kernel sees it.
func (b *BufRing) Published() uint16 { return *(*uint16)(unsafe.Pointer(&b.descs[14])) }

// Free unmaps the ring and buffers; the ring must be closed or the group
// unregistered first.
func (b *BufRing) Free() {
	for _, m := range [][]byte{b.mem, b.descs} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	b.mem, b.descs = nil, nil
}

// Unregister takes b's buffer group away from the ring, so that no receive
// picks one of its buffers any more; on a SINGLE_ISSUER ring, call it on
// the issuer thread.
func (b *BufRing) Unregister(ringFD int) error {
	reg := bufReg{bgid: b.bgid}
	_, err := Register(ringFD, UnregisterPbufRing, unsafe.Pointer(&reg), 1)
	return err
}

// Size is the size of each buffer, and so the most one receive returns.
func (b *BufRing) Size() int { return b.size }

// Entries is the number of buffers.
func (b *BufRing) Entries() int { return int(b.entries) }
