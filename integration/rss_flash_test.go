package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// A flash tier (-o ext_path) holds far more than -m: with -m 64 and a 1 GB
// file, 250 MB of values written at a pace the flusher keeps up with are
// all read back intact, none evicted, and the server's peak resident
// memory stays within the -m bound of TestPeakRSS, extstore's write
// buffers (4 MB each, outside -m in memcached too) included. memcached
// 1.6.45 runs the same test, which proves the pace is one memcached keeps
// up with.
const (
	flashValueSize = 16 << 10
	flashItems     = 250 * mib / flashValueSize // 16,000
	flashBatch     = 256                        // 4 MB between waits
	// flashLag is how many written items may still wait in RAM before
	// the next batch is sent: 32 MB, half of -m.
	flashLag = 2048
)

func TestFlashTierReadsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: writes 250 MB through each server")
	}
	if runtime.GOOS != "linux" {
		t.Skip("VmHWM is read from /proc")
	}
	forEachTarget(t, func(t *testing.T, tg target) {
		dir := t.TempDir()
		// memcached opens the file as its -u user (nobody), gocached too.
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join(dir, "extstore")
		p := startServer(t, tg, "-m", "64", "-o", "ext_path="+file+":1024m,ext_item_age=0")
		c := rssDial(t, p.Addr())
		defer c.Close()
		r := bufio.NewReaderSize(c, 64<<10)
		for start := 0; start < flashItems; start += flashBatch {
			var req bytes.Buffer
			for i := start; i < min(start+flashBatch, flashItems); i++ {
				fmt.Fprintf(&req, "set flash%d 0 0 %d noreply\r\n%s\r\n", i, flashValueSize, flashValueOf(i))
			}
			req.WriteString("mn\r\n")
			if _, err := c.Write(req.Bytes()); err != nil {
				t.Fatal(err)
			}
			if line, err := r.ReadString('\n'); err != nil || line != "MN\r\n" {
				t.Fatalf("after a batch of sets: %q, %v", line, err)
			}
			waitFlashed(t, p.Addr(), start+flashBatch-flashLag)
		}
		misses, wrong := 0, 0
		for start := 0; start < flashItems; start += 100 {
			var req bytes.Buffer
			req.WriteString("get")
			end := min(start+100, flashItems)
			for i := start; i < end; i++ {
				fmt.Fprintf(&req, " flash%d", i)
			}
			req.WriteString("\r\n")
			if _, err := c.Write(req.Bytes()); err != nil {
				t.Fatal(err)
			}
			got := readValues(t, r)
			for i := start; i < end; i++ {
				v, ok := got[fmt.Sprintf("flash%d", i)]
				switch {
				case !ok:
					misses++
				case !bytes.Equal(v, flashValueOf(i)):
					wrong++
				}
			}
		}
		written := rssStat(t, p.Addr(), "extstore_objects_written")
		fromFlash := rssStat(t, p.Addr(), "get_extstore")
		mem, err := p.Memory()
		if err != nil {
			t.Fatal(err)
		}
		index := 2 * rssStat(t, p.Addr(), "hash_bytes")
		limit := 64 * mib
		bound := int64(1.05*float64(limit)) + 32*mib + index
		t.Logf("%s: %d items, %d written to flash, %d read from flash; %d misses, %d wrong; peak RSS %.1f MB (bound %.1f MB); %d evictions",
			tg.name, flashItems, written, fromFlash, misses, wrong, float64(mem.Peak)/mib, float64(bound)/mib, rssStat(t, p.Addr(), "evictions"))
		if misses != 0 || wrong != 0 {
			t.Errorf("%d of %d items missing and %d with the wrong value", misses, flashItems, wrong)
		}
		if fromFlash < flashItems/2 {
			t.Errorf("only %d gets were served from flash: the test did not exercise the tier", fromFlash)
		}
		if mem.Peak > bound {
			t.Errorf("peak RSS %d MB over the bound %d MB", mem.Peak/mib, bound/mib)
		}
	})
}

// flashValueOf is item i's value: its number then a byte pattern that
// differs per item, so a value read from another item's place shows.
func flashValueOf(i int) []byte {
	v := make([]byte, flashValueSize)
	n := copy(v, fmt.Sprintf("%08d:", i))
	for j := n; j < len(v); j++ {
		v[j] = 'a' + byte((i+j)%26)
	}
	return v
}

// waitFlashed waits until the server has written at least n items to
// flash (a generous deadline: the flusher runs in the background).
func waitFlashed(t *testing.T, addr string, n int) {
	t.Helper()
	if n <= 0 {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		w := rssStat(t, addr, "extstore_objects_written")
		if w >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s only %d items written to flash, want %d: the flusher does not keep up", w, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readValues reads one get's reply: the values by key, until END.
func readValues(t *testing.T, r *bufio.Reader) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "END\r\n" {
			return out
		}
		var key string
		var flags, n int
		if _, err := fmt.Sscanf(line, "VALUE %s %d %d\r\n", &key, &flags, &n); err != nil {
			t.Fatalf("reply line %q: %v", line, err)
		}
		v := make([]byte, n+2)
		if _, err := io.ReadFull(r, v); err != nil {
			t.Fatal(err)
		}
		out[key] = v[:n]
	}
}
