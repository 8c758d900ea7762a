//go:build linux

package reactor

import (
	"encoding/binary"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// NAPIRouter maps NAPI IDs to reactors so that each epoll context only holds
// sockets of one NAPI: the kernel busy-polls only an epoll context's current
// NAPI, so a context that mixes NAPIs starves all but one of them.
//
// The mapping is learned: the reactor that first sees an unowned nonzero ID
// claims it if it owns none yet; otherwise the ID goes to the first reactor
// still without one. With every reactor owning an ID, new IDs stay where they
// were accepted (more NAPIs than reactors: such sockets count as misrouted).
// The router is consulted once per accepted connection, never per request.
type NAPIRouter struct {
	mu    sync.Mutex
	owner map[uint32]int
	ids   []*atomic.Uint32 // ids[i] is reactor i's NAPI ID, 0 while unknown
	// warnedShared: the warning about a NAPI without a reactor of its own was logged.
	warnedShared bool
}

func NewNAPIRouter(ids []*atomic.Uint32) *NAPIRouter {
	return &NAPIRouter{owner: make(map[uint32]int), ids: ids}
}

// Route returns the reactor that must serve a connection with NAPI ID id
// accepted by reactor self.
func (rt *NAPIRouter) Route(self int, id uint32) int {
	if id == 0 {
		return self
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if r, ok := rt.owner[id]; ok {
		return r
	}
	target := -1
	if rt.ids[self].Load() == 0 {
		target = self
	} else {
		for i, v := range rt.ids {
			if v.Load() == 0 {
				target = i
				break
			}
		}
	}
	if target < 0 {
		if !rt.warnedShared {
			rt.warnedShared = true
			slog.Warn("more NAPIs than reactors: this connection's epoll context also serves another NAPI; "+
				"busy polling and IRQ suspension stall whichever NAPI it is not polling (use -t auto)",
				"napi_id", id, "reactor", self, "reactors", len(rt.ids))
		}
		return self
	}
	rt.owner[id] = target
	rt.ids[target].Store(id)
	return target
}

// IncomingNAPIID returns the NAPI ID of the device queue the socket's packets
// last arrived on (0 for loopback or when unknown).
func IncomingNAPIID(fd int) uint32 {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_INCOMING_NAPI_ID)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// ListenDevice returns the non-loopback interface that owns ip and its RX
// queue count (drivers make one NAPI per RX queue, so the count stands in for
// the NAPI count), or nil when ip is a wildcard, loopback, or on no device.
func ListenDevice(ip net.IP) (*net.Interface, int) {
	if ip == nil || ip.IsUnspecified() || ip.IsLoopback() {
		return nil, 0
	}
	ifi := interfaceOwning(ip)
	if ifi == nil || ifi.Flags&net.FlagLoopback != 0 {
		return nil, 0
	}
	return ifi, rxQueueCount(ifi)
}

// AutoReactors picks the reactor count for -t auto: one per NAPI of the
// interface that owns the listen address, or GOMAXPROCS when there is no single
// such interface or it has no NAPIs (wildcard, loopback). It returns the
// interface name too ("" when none).
func AutoReactors(ips []net.IP) (int, string) {
	fallback := runtime.GOMAXPROCS(0)
	if len(ips) != 1 {
		return fallback, ""
	}
	ifi, n := ListenDevice(ips[0])
	if ifi == nil {
		return fallback, ""
	}
	if n < 1 {
		return fallback, ifi.Name
	}
	return n, ifi.Name
}

// interfaceOwning returns the interface with address ip, or nil. It asks
// rtnetlink from the calling thread, so it sees that thread's network namespace.
func interfaceOwning(ip net.IP) *net.Interface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	for i := range ifs {
		addrs, err := ifs[i].Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return &ifs[i]
			}
		}
	}
	return nil
}

// rxQueueCount returns the number of RX queues of ifi. It prefers rtnetlink's
// IFLA_NUM_RX_QUEUES, which follows the caller's network namespace, over
// /sys/class/net, which shows the namespace sysfs was mounted in.
func rxQueueCount(ifi *net.Interface) int {
	if n := rtnlRxQueues(ifi.Index); n > 0 {
		return n
	}
	m, _ := filepath.Glob(filepath.Join("/sys/class/net", ifi.Name, "queues", "rx-*"))
	return len(m)
}

func rtnlRxQueues(ifindex int) int {
	b, err := syscall.NetlinkRIB(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return 0
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return 0
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg {
			continue
		}
		info := (*syscall.IfInfomsg)(unsafe.Pointer(&m.Data[0]))
		if int(info.Index) != ifindex {
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return 0
		}
		for _, a := range attrs {
			if a.Attr.Type == unix.IFLA_NUM_RX_QUEUES && len(a.Value) >= 4 {
				return int(binary.NativeEndian.Uint32(a.Value))
			}
		}
	}
	return 0
}
