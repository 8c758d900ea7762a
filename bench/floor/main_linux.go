//go:build linux

package floor

import (
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// Main is a floor server's main: it parses memcached's -l and -p (and
// takes, ignoring them, -U, -m, -c and -t, so enginecmp starts it like the
// other targets), listens, and runs serve on a locked thread. SIGTERM (how
// enginecmp stops every target) ends the process at once, or, given stop,
// calls stop with the listener and exits when serve returns: a server whose
// listening socket outlives the process (an io_uring request holds it until
// the ring is torn down, after exit) frees the port for the next target
// that way. A serve that does not return within stopGrace is cut short.
func Main(name string, serve func(lfd int) error, stop func(lfd int)) {
	if err := run(serve, stop); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// stopGrace bounds an orderly stop.
const stopGrace = 2 * time.Second

func run(serve func(lfd int) error, stop func(lfd int)) error {
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
	lfd, err := Listen(addr.As4(), *port)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-sig
		if stop != nil {
			stop(lfd)
			time.Sleep(stopGrace)
		}
		os.Exit(0)
	}()
	runtime.LockOSThread()
	return serve(lfd)
}

// Listen opens a non-blocking TCP listener on ip:port (0: any free port).
func Listen(ip [4]byte, port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: ip}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	if err := unix.Listen(fd, 1024); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
