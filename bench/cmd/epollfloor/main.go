//go:build linux

// Command epollfloor is the floor of enginecmp's comparison: a server that
// does the least user-space work a memcached text-protocol server can do
// and still makes the system calls every epoll server makes per request
// (epoll_wait per batch, one read and one write per connection turn). It
// answers every "get KEY" with a hit of a fixed 100-byte value and every
// "set" with STORED, keeping nothing. Its CPU per request on the same load
// is what the kernel charges any epoll server for that load; what gocached
// or memcached cost on top of it is the most user-space work could save.
//
//	epollfloor -l 127.0.0.1 -p 11211
//
// It takes (and ignores) memcached's -U, -m, -c and -t so enginecmp can start
// it like the other targets. Not a cache: never use it for anything else.
package main

import (
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	flag "github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "epollfloor:", err)
		os.Exit(1)
	}
}

func run() error {
	host := flag.StringP("listen", "l", "127.0.0.1", "IPv4 address to listen on")
	port := flag.IntP("port", "p", 11211, "TCP port")
	flag.IntP("udp-port", "U", 0, "ignored")
	flag.IntP("memory-limit", "m", 64, "ignored")
	flag.IntP("conn-limit", "c", 1024, "ignored")
	flag.IntP("threads", "t", 1, "ignored: one thread")
	flag.Parse()
	addr, err := netip.ParseAddr(*host)
	if err != nil || !addr.Is4() {
		return fmt.Errorf("-l %q: want an IPv4 address", *host)
	}
	lfd, err := listen(addr.As4(), *port)
	if err != nil {
		return err
	}
	// SIGTERM is how enginecmp stops every target: an orderly exit.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		os.Exit(0)
	}()
	runtime.LockOSThread()
	return serve(lfd)
}

func listen(ip [4]byte, port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: ip}); err != nil {
		return -1, fmt.Errorf("bind: %w", err)
	}
	if err := unix.Listen(fd, 1024); err != nil {
		return -1, err
	}
	return fd, nil
}
