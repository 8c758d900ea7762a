package probe

import (
	"errors"
	"math"
	"testing"

	"golang.org/x/sys/unix"
)

func newEpoll(t *testing.T) int {
	t.Helper()
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func requireEpollParams(t *testing.T) {
	t.Helper()
	v, err := Uname()
	if err != nil {
		t.Fatal(err)
	}
	r := EpollParamsSupported()
	if v.AtLeast(6, 9) && !r.Supported && !EpollParamsUnsupported(r.Err) {
		t.Fatalf("kernel %s should have EPIOCSPARAMS: %s", v, r)
	}
	if !r.Supported {
		t.Skipf("skipping: %s", r)
	}
}

func TestEpollParamsRoundTrip(t *testing.T) {
	requireEpollParams(t)
	netAdmin, err := HasCap(CapNetAdmin)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		p          EpollParams
		dropAdmin  bool       // run on a thread without CAP_NET_ADMIN
		wantErrno  unix.Errno // 0 = must succeed
		needsAdmin bool       // only meaningful with CAP_NET_ADMIN
	}{
		{"zero", EpollParams{}, false, 0, false},
		{"napibusy", EpollParams{BusyPollUsecs: 64, BusyPollBudget: 64, PreferBusyPoll: true}, false, 0, false},
		{"fullbusy", EpollParams{BusyPollUsecs: 1000, BusyPollBudget: 64, PreferBusyPoll: true}, false, 0, false},
		{"max usecs", EpollParams{BusyPollUsecs: math.MaxInt32, BusyPollBudget: 1}, false, 0, false},
		{"usecs over S32_MAX", EpollParams{BusyPollUsecs: math.MaxInt32 + 1}, false, unix.EINVAL, false},
		{"budget 64 unprivileged", EpollParams{BusyPollUsecs: 10, BusyPollBudget: MaxUnprivilegedBudget}, true, 0, false},
		{"budget 65 unprivileged", EpollParams{BusyPollUsecs: 10, BusyPollBudget: MaxUnprivilegedBudget + 1}, true, unix.EPERM, false},
		{"budget 65 with CAP_NET_ADMIN", EpollParams{BusyPollUsecs: 10, BusyPollBudget: MaxUnprivilegedBudget + 1}, false, 0, true},
		{"budget 65535 with CAP_NET_ADMIN", EpollParams{BusyPollBudget: math.MaxUint16}, false, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrno := tt.wantErrno
			if !netAdmin && !tt.dropAdmin && tt.p.BusyPollBudget > MaxUnprivilegedBudget {
				wantErrno = unix.EPERM // without the capability the kernel must refuse
			}
			epfd := newEpoll(t)
			set := func() error { return SetEpollParams(epfd, tt.p) }
			var err error
			if tt.dropAdmin && netAdmin {
				err = WithoutCap(CapNetAdmin, set)
			} else {
				err = set()
			}
			if wantErrno != 0 {
				if !errors.Is(err, wantErrno) {
					t.Fatalf("SetEpollParams(%s) = %v, want %v", tt.p, err, wantErrno)
				}
				if got, gerr := GetEpollParams(epfd); gerr != nil || got != (EpollParams{}) {
					t.Fatalf("after a refused set, params = %s, %v; want untouched zero", got, gerr)
				}
				return
			}
			if err != nil {
				t.Fatalf("SetEpollParams(%s): %v", tt.p, err)
			}
			got, err := GetEpollParams(epfd)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.p {
				t.Fatalf("read back %s, set %s", got, tt.p)
			}
		})
	}
}

func TestEpollParamsNonzeroPad(t *testing.T) {
	requireEpollParams(t)
	epfd := newEpoll(t)
	a := epollParamsABI{busyPollUsecs: 5, busyPollBudget: 8, pad: 1}
	if err := epollIoctl(epfd, unix.EPIOCSPARAMS, &a); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("nonzero pad: %v, want EINVAL", err)
	}
	a = epollParamsABI{busyPollBudget: 8, preferBusyPoll: 2}
	if err := epollIoctl(epfd, unix.EPIOCSPARAMS, &a); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("prefer_busy_poll 2: %v, want EINVAL", err)
	}
}

func TestEpollParamsWrongFd(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	// A file without the ioctl answers ENOTTY, as a pre-6.9 epoll fd does.
	err := SetEpollParams(p[0], EpollParams{BusyPollBudget: 8})
	if !errors.Is(err, unix.ENOTTY) || !EpollParamsUnsupported(err) {
		t.Fatalf("EPIOCSPARAMS on a pipe: %v, want ENOTTY classified unsupported", err)
	}
	if _, err := GetEpollParams(-1); !errors.Is(err, unix.EBADF) || EpollParamsUnsupported(err) {
		t.Fatalf("EPIOCGPARAMS on fd -1: %v, want EBADF not classified unsupported", err)
	}
	if EpollParamsUnsupported(unix.EPERM) || EpollParamsUnsupported(unix.EINVAL) {
		t.Fatal("EPERM/EINVAL reject values; they must not read as a missing ioctl")
	}
}

func TestEpollParamsSupportedSentence(t *testing.T) {
	r := EpollParamsSupported()
	if r.Sentence == "" || r.Feature != "EPIOCSPARAMS" {
		t.Fatalf("%+v", r)
	}
	if r.Supported != (r.Err == nil) {
		t.Fatalf("Supported %v with Err %v", r.Supported, r.Err)
	}
	t.Logf("%s", r)
}
