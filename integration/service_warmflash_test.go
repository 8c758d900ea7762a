package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gocached/gocached/internal/testproc"
)

// Warm restart with a flash tier, which memcached 1.6.45 refuses (it
// starts empty): a graceful stop (SIGUSR1) saves the RAM and the flash
// pages, and the next start with the same -e file and ext_path serves
// every value, those on flash too, with extstore's gauges as they were. A
// stop that does not save (SIGKILL, SIGTERM) leaves nothing trusted: the
// next start serves no value, and never a wrong one.

const (
	warmItems  = 3000
	warmSmall  = 200 // values under ext_item_size: they stay in RAM
	warmRounds = 100 // keys per get
)

// warmValue is item i's value in generation gen: sizes from 1 KB to 5 KB
// (small ones below warmSmall), its key and generation first, then a
// pattern of its own, so a value from another item or generation shows.
func warmValue(i, gen int) []byte {
	n := 1024 + (i*131)%4096
	if i < warmSmall {
		n = 100 + i
	}
	v := make([]byte, n)
	k := copy(v, fmt.Sprintf("%06d/%d:", i, gen))
	for j := k; j < n; j++ {
		v[j] = 'a' + byte((i*7+j+gen)%26)
	}
	return v
}

// warmFlashServer starts tg with -e mem and the flash tier on ext,
// logging at -v so the save's report shows.
func warmFlashServer(t *testing.T, tg target, mem, ext string) *testproc.Proc {
	t.Helper()
	opts := "ext_path=" + ext + ":64m,ext_page_size=8,ext_item_size=512"
	return startSpec(t, spec(t, tg, "-l", "127.0.0.1", "-U", "0", "-m", "64", "-v", "-e", mem, "-o", opts), true)
}

// warmWrite sets every item of generation gen, then waits until at least
// half of them are on flash.
func warmWrite(t *testing.T, p *testproc.Proc, gen int) {
	t.Helper()
	c := rssDial(t, p.Addr())
	defer c.Close()
	r := bufio.NewReader(c)
	var req bytes.Buffer
	for i := range warmItems {
		v := warmValue(i, gen)
		fmt.Fprintf(&req, "set warm%d %d 0 %d noreply\r\n%s\r\n", i, i, len(v), v)
	}
	req.WriteString("mn\r\n")
	if _, err := c.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "MN\r\n" {
		t.Fatalf("after the sets: %q, %v", line, err)
	}
	// Once every key holds generation gen, the live flash records are
	// all of it: the earlier generations' were deleted by the sets.
	want := int64(warmItems-warmSmall) / 2
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		used := rssStat(t, p.Addr(), "extstore_objects_used")
		if used >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s %d values of generation %d on flash, want %d", used, gen, want)
		}
	}
}

// warmRead reads every item back: how many hit with generation gen's
// value, missed, or came back wrong (another value, or wrong flags).
func warmRead(t *testing.T, p *testproc.Proc, gen int) (hits, misses, wrong int) {
	t.Helper()
	c := rssDial(t, p.Addr())
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	for start := 0; start < warmItems; start += warmRounds {
		end := min(start+warmRounds, warmItems)
		var req bytes.Buffer
		req.WriteString("get")
		for i := start; i < end; i++ {
			fmt.Fprintf(&req, " warm%d", i)
		}
		req.WriteString("\r\n")
		if _, err := c.Write(req.Bytes()); err != nil {
			t.Fatal(err)
		}
		got := readValues(t, r)
		for i := start; i < end; i++ {
			v, ok := got[fmt.Sprintf("warm%d", i)]
			switch {
			case !ok:
				misses++
			case !bytes.Equal(v, warmValue(i, gen)):
				wrong++
				if wrong <= 3 {
					t.Errorf("warm%d: %d bytes %.20q, want generation %d's %d bytes", i, len(v), v, gen, len(warmValue(i, gen)))
				}
			default:
				hits++
			}
		}
	}
	return hits, misses, wrong
}

// stopWith signals p and waits for its exit, which must be clean for
// SIGUSR1 and SIGTERM.
func stopWith(t *testing.T, p *testproc.Proc, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(p.Pid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("no exit 60 s after %v", sig)
	}
	if err := p.Stop(0); sig != syscall.SIGKILL && err != nil {
		t.Fatalf("exit after %v: %v", sig, err)
	}
}

var savedFlash = regexp.MustCompile(`flash: (\d+) objects, (\d+) bytes on (\d+) pages`)

func TestWarmRestartKeepsFlash(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: four server starts per engine")
	}
	forEachEngine(t, func(t *testing.T, tg target) {
		dir := flashDir(t)
		mem, ext := filepath.Join(dir, "mem"), filepath.Join(dir, "ext")

		// Each round writes a generation of values with ext_item_age 0,
		// then stops; the next start (ext_item_age at its default, so
		// nothing moves to flash and the gauges are the restored ones)
		// reads them back. The second graceful round runs on pages the
		// first restart kept.
		p := warmFlashServer(t, tg, mem, ext)
		for gen, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR1, syscall.SIGKILL, syscall.SIGTERM} {
			setItemAge(t, p.Addr(), 0)
			warmWrite(t, p, gen)
			stopWith(t, p, sig)
			m := savedFlash.FindStringSubmatch(p.Output())
			if sig == syscall.SIGUSR1 && m == nil {
				t.Errorf("no save report with the flash pages in the output:\n%s", p.Output())
			}
			p = warmFlashServer(t, tg, mem, ext)
			if sig != syscall.SIGUSR1 {
				// Nothing saved: no value is served from what the
				// stopped server left, on flash or in RAM.
				hits, misses, wrong := warmRead(t, p, gen)
				if hits != 0 || wrong != 0 || rssStat(t, p.Addr(), "extstore_objects_used") != 0 {
					t.Errorf("after %v: %d hits, %d wrong, %d misses; want every item missing", sig, hits, wrong, misses)
				}
				continue
			}
			for i, name := range []string{"extstore_objects_used", "extstore_bytes_used", "extstore_pages_used"} {
				if m == nil {
					break
				}
				want, _ := strconv.ParseInt(m[i+1], 10, 64)
				if got := rssStat(t, p.Addr(), name); got != want || want == 0 {
					t.Errorf("generation %d: %s %d after the restart, saved with %d", gen, name, got, want)
				}
			}
			hits, misses, wrong := warmRead(t, p, gen)
			fromFlash := rssStat(t, p.Addr(), "get_extstore")
			t.Logf("%s: restart after SIGUSR1: %d hits (%d read from flash), %d misses, %d wrong", tg.name, hits, fromFlash, misses, wrong)
			if hits != warmItems {
				t.Errorf("generation %d: %d of %d items back after a graceful stop, %d missing, %d wrong", gen, hits, warmItems, misses, wrong)
			}
			if fromFlash < (warmItems-warmSmall)/2 {
				t.Errorf("generation %d: only %d values read from flash: the restart did not exercise the tier", gen, fromFlash)
			}
		}
	})
}

// setItemAge sets ext_item_age on a running server (the extstore admin
// command).
func setItemAge(t *testing.T, addr string, age int) {
	t.Helper()
	c := rssDial(t, addr)
	defer c.Close()
	fmt.Fprintf(c, "extstore item_age %d\r\n", age)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "OK\r\n" {
		t.Fatalf("extstore item_age: %q, %v", line, err)
	}
}

// A restart with another ext_path size keeps the RAM items and drops the
// flash ones, with a warning that names the change; no value is wrong.
func TestWarmRestartChangedFlashDropsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: two server starts")
	}
	runTargets(t, []target{{name: "epoll", engine: "epoll"}}, func(t *testing.T, tg target) {
		dir := flashDir(t)
		mem, ext := filepath.Join(dir, "mem"), filepath.Join(dir, "ext")
		p := warmFlashServer(t, tg, mem, ext)
		setItemAge(t, p.Addr(), 0)
		warmWrite(t, p, 0)
		stopWith(t, p, syscall.SIGUSR1)

		opts := "ext_path=" + ext + ":32m,ext_page_size=8,ext_item_size=512"
		p = startSpec(t, spec(t, tg, "-l", "127.0.0.1", "-U", "0", "-m", "64", "-e", mem, "-o", opts), true)
		hits, misses, wrong := warmRead(t, p, 0)
		t.Logf("%s: restart with another ext_path size: %d hits, %d misses, %d wrong", tg.name, hits, misses, wrong)
		if wrong != 0 || hits < warmSmall || misses < (warmItems-warmSmall)/2 {
			t.Errorf("%d hits, %d misses, %d wrong; want the %d or more RAM items back and the flash ones (half or more) dropped",
				hits, misses, wrong, warmSmall)
		}
		if n := rssStat(t, p.Addr(), "extstore_objects_used"); n != 0 {
			t.Errorf("extstore_objects_used %d after dropping the flash items", n)
		}
		if out := p.Output(); !regexp.MustCompile(`level=WARN msg=".*items whose values were on flash dropped: .*ext_path 1 was .*:64m, now .*:32m`).MatchString(out) {
			t.Errorf("no warning naming the ext_path change in the output:\n%s", out)
		}
	})
}

// flashDir is a directory for the memory and flash files that the
// server's -u user (nobody, when the tests run as root) can write.
func flashDir(t *testing.T) string {
	if os.Geteuid() == 0 {
		return userDir(t)
	}
	return t.TempDir()
}
