package integration

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/gocached/gocached/internal/testproc"
)

// TestGomemcache drives the whole API of github.com/bradfitz/gomemcache.
func TestGomemcache(t *testing.T) {
	forEachTarget(t, func(t *testing.T, tg target) {
		t.Parallel()
		// A fresh server per step keeps steps independent without relying
		// on flush_all (which has its own step).
		for _, step := range gomemcacheSteps {
			t.Run(step.name, func(t *testing.T) {
				var srv *testproc.Proc
				if tg.isReference() {
					srv = startDisposable(t, tg)
				} else {
					srv = startServer(t, tg)
				}
				mc := memcache.New(srv.Addr())
				mc.Timeout = 5 * time.Second
				defer mc.Close()
				step.run(t, mc)
			})
		}
	})
}

var gomemcacheSteps = []struct {
	name string
	run  func(t *testing.T, mc *memcache.Client)
}{
	{"Ping", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Ping(), "Ping")
	}},
	{"SetGet", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("hello"), Flags: 0xdeadbeef}), "Set")
		it, err := mc.Get("k")
		must(t, err, "Get")
		if string(it.Value) != "hello" || it.Flags != 0xdeadbeef || it.Key != "k" {
			t.Fatalf("Get = %q flags %#x key %q", it.Value, it.Flags, it.Key)
		}
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("again")}), "Set overwrite")
		it, err = mc.Get("k")
		must(t, err, "Get")
		if string(it.Value) != "again" || it.Flags != 0 {
			t.Fatalf("Get after overwrite = %q flags %d", it.Value, it.Flags)
		}
	}},
	{"EmptyAndBinaryValues", func(t *testing.T, mc *memcache.Client) {
		values := map[string][]byte{
			"empty":  {},
			"binary": {0, '\r', '\n', 0xff, 'E', 'N', 'D', '\r', '\n'},
			"big":    bytes.Repeat([]byte("0123456789abcdef"), 60<<10), // 960 KiB, under -I 1m
		}
		for k, v := range values {
			must(t, mc.Set(&memcache.Item{Key: k, Value: v}), "Set "+k)
		}
		for k, v := range values {
			it, err := mc.Get(k)
			must(t, err, "Get "+k)
			if !bytes.Equal(it.Value, v) {
				t.Fatalf("Get %s: %d bytes, want %d", k, len(it.Value), len(v))
			}
		}
	}},
	{"GetMiss", func(t *testing.T, mc *memcache.Client) {
		if _, err := mc.Get("absent"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Get absent: %v, want ErrCacheMiss", err)
		}
	}},
	{"GetMulti", func(t *testing.T, mc *memcache.Client) {
		keys := []string{"a", "b", "c", "missing1", "missing2"}
		for _, k := range keys[:3] {
			must(t, mc.Set(&memcache.Item{Key: k, Value: []byte("v-" + k)}), "Set")
		}
		got, err := mc.GetMulti(keys)
		must(t, err, "GetMulti")
		if len(got) != 3 {
			t.Fatalf("GetMulti returned %d items, want 3", len(got))
		}
		for _, k := range keys[:3] {
			if it := got[k]; it == nil || string(it.Value) != "v-"+k {
				t.Fatalf("GetMulti[%s] = %+v", k, it)
			}
		}
	}},
	{"Add", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Add(&memcache.Item{Key: "k", Value: []byte("1")}), "Add new")
		if err := mc.Add(&memcache.Item{Key: "k", Value: []byte("2")}); !errors.Is(err, memcache.ErrNotStored) {
			t.Fatalf("Add existing: %v, want ErrNotStored", err)
		}
		wantValue(t, mc, "k", "1")
	}},
	{"Replace", func(t *testing.T, mc *memcache.Client) {
		if err := mc.Replace(&memcache.Item{Key: "k", Value: []byte("x")}); !errors.Is(err, memcache.ErrNotStored) {
			t.Fatalf("Replace absent: %v, want ErrNotStored", err)
		}
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("1")}), "Set")
		must(t, mc.Replace(&memcache.Item{Key: "k", Value: []byte("2")}), "Replace")
		wantValue(t, mc, "k", "2")
	}},
	{"AppendPrepend", func(t *testing.T, mc *memcache.Client) {
		if err := mc.Append(&memcache.Item{Key: "k", Value: []byte("x")}); !errors.Is(err, memcache.ErrNotStored) {
			t.Fatalf("Append absent: %v, want ErrNotStored", err)
		}
		if err := mc.Prepend(&memcache.Item{Key: "k", Value: []byte("x")}); !errors.Is(err, memcache.ErrNotStored) {
			t.Fatalf("Prepend absent: %v, want ErrNotStored", err)
		}
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("mid"), Flags: 7}), "Set")
		must(t, mc.Append(&memcache.Item{Key: "k", Value: []byte("-end"), Flags: 99}), "Append")
		must(t, mc.Prepend(&memcache.Item{Key: "k", Value: []byte("start-"), Flags: 99}), "Prepend")
		it, err := mc.Get("k")
		must(t, err, "Get")
		// append/prepend keep the original flags, as memcached does.
		if string(it.Value) != "start-mid-end" || it.Flags != 7 {
			t.Fatalf("Get = %q flags %d, want start-mid-end flags 7", it.Value, it.Flags)
		}
	}},
	{"CompareAndSwap", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("1")}), "Set")
		a, err := mc.Get("k")
		must(t, err, "Get")
		b, err := mc.Get("k")
		must(t, err, "Get")
		a.Value = []byte("from-a")
		must(t, mc.CompareAndSwap(a), "CompareAndSwap first")
		b.Value = []byte("from-b")
		if err := mc.CompareAndSwap(b); !errors.Is(err, memcache.ErrCASConflict) {
			t.Fatalf("CompareAndSwap stale: %v, want ErrCASConflict", err)
		}
		wantValue(t, mc, "k", "from-a")
		c, err := mc.Get("k")
		must(t, err, "Get")
		must(t, mc.Delete("k"), "Delete")
		if err := mc.CompareAndSwap(c); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("CompareAndSwap deleted: %v, want ErrCacheMiss", err)
		}
	}},
	{"Delete", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("1")}), "Set")
		must(t, mc.Delete("k"), "Delete")
		if err := mc.Delete("k"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Delete again: %v, want ErrCacheMiss", err)
		}
		if _, err := mc.Get("k"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Get deleted: %v, want ErrCacheMiss", err)
		}
	}},
	{"DeleteAll", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("1")}), "Set")
		must(t, mc.DeleteAll(), "DeleteAll") // flush_all; the client accepts OK
		if _, err := mc.Get("k"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Get after DeleteAll: %v, want ErrCacheMiss", err)
		}
	}},
	{"IncrementDecrement", func(t *testing.T, mc *memcache.Client) {
		if _, err := mc.Increment("n", 1); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Increment absent: %v, want ErrCacheMiss", err)
		}
		if _, err := mc.Decrement("n", 1); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Decrement absent: %v, want ErrCacheMiss", err)
		}
		must(t, mc.Set(&memcache.Item{Key: "n", Value: []byte("10")}), "Set")
		for _, c := range []struct {
			incr  bool
			delta uint64
			want  uint64
		}{
			{true, 5, 15},
			{false, 3, 12},
			{false, 100, 0}, // decr floors at 0
			{true, 18446744073709551615, 18446744073709551615},
			{true, 2, 1}, // incr wraps at 2^64
		} {
			var got uint64
			var err error
			if c.incr {
				got, err = mc.Increment("n", c.delta)
			} else {
				got, err = mc.Decrement("n", c.delta)
			}
			must(t, err, "incr/decr")
			if got != c.want {
				t.Fatalf("incr=%v %d: got %d, want %d", c.incr, c.delta, got, c.want)
			}
		}
		must(t, mc.Set(&memcache.Item{Key: "s", Value: []byte("abc")}), "Set")
		if _, err := mc.Increment("s", 1); err == nil || !strings.Contains(err.Error(), "non-numeric") {
			t.Fatalf("Increment non-numeric: %v, want the non-numeric client error", err)
		}
	}},
	{"Touch", func(t *testing.T, mc *memcache.Client) {
		if err := mc.Touch("absent", 10); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Touch absent: %v, want ErrCacheMiss", err)
		}
		// memcached's clock ticks each second: an N s expiry lands in (N-1, N] s.
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("1"), Expiration: 2}), "Set")
		must(t, mc.Touch("k", 100), "Touch")
		time.Sleep(2100 * time.Millisecond) // past the original 2 s expiry
		wantValue(t, mc, "k", "1")
		must(t, mc.Touch("k", -1), "Touch to expire")
		if _, err := mc.Get("k"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Get after negative touch: %v, want ErrCacheMiss", err)
		}
	}},
	{"GetAndTouch", func(t *testing.T, mc *memcache.Client) {
		if _, err := mc.GetAndTouch("absent", 10); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("GetAndTouch absent: %v, want ErrCacheMiss", err)
		}
		must(t, mc.Set(&memcache.Item{Key: "k", Value: []byte("v"), Flags: 3}), "Set")
		it, err := mc.GetAndTouch("k", 100)
		must(t, err, "GetAndTouch")
		if string(it.Value) != "v" || it.Flags != 3 {
			t.Fatalf("GetAndTouch = %q flags %d", it.Value, it.Flags)
		}
	}},
	{"Expiration", func(t *testing.T, mc *memcache.Client) {
		must(t, mc.Set(&memcache.Item{Key: "short", Value: []byte("1"), Expiration: 2}), "Set")
		must(t, mc.Set(&memcache.Item{Key: "past", Value: []byte("1"), Expiration: -1}), "Set")
		must(t, mc.Set(&memcache.Item{Key: "abs", Value: []byte("1"), Expiration: int32(time.Now().Add(time.Hour).Unix())}), "Set")
		if _, err := mc.Get("past"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("Get negative expiry: %v, want ErrCacheMiss", err)
		}
		wantValue(t, mc, "abs", "1")
		// Gone once the server's clock (one tick a second, late on a
		// loaded machine) has passed the 2 s: wait for that, bounded.
		time.Sleep(2100 * time.Millisecond)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			_, err := mc.Get("short")
			if errors.Is(err, memcache.ErrCacheMiss) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Get expired: %v, want ErrCacheMiss", err)
			}
		}
	}},
	{"MalformedKey", func(t *testing.T, mc *memcache.Client) {
		// Rejected by the client before it reaches the server; the server
		// side of long keys is covered by the differential test.
		if err := mc.Set(&memcache.Item{Key: strings.Repeat("k", 251), Value: []byte("1")}); !errors.Is(err, memcache.ErrMalformedKey) {
			t.Fatalf("Set 251-byte key: %v, want ErrMalformedKey", err)
		}
		must(t, mc.Set(&memcache.Item{Key: strings.Repeat("k", 250), Value: []byte("1")}), "Set 250-byte key")
		wantValue(t, mc, strings.Repeat("k", 250), "1")
	}},
	{"FlushAll", func(t *testing.T, mc *memcache.Client) {
		for _, k := range []string{"a", "b"} {
			must(t, mc.Set(&memcache.Item{Key: k, Value: []byte("1")}), "Set")
		}
		must(t, mc.FlushAll(), "FlushAll")
		got, err := mc.GetMulti([]string{"a", "b"})
		must(t, err, "GetMulti")
		if len(got) != 0 {
			t.Fatalf("after FlushAll: %d items left", len(got))
		}
		must(t, mc.Set(&memcache.Item{Key: "a", Value: []byte("after")}), "Set after flush")
		wantValue(t, mc, "a", "after")
	}},
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func wantValue(t *testing.T, mc *memcache.Client, key, want string) {
	t.Helper()
	it, err := mc.Get(key)
	if err != nil {
		t.Fatalf("Get %s: %v", abbreviate(key), err)
	}
	if string(it.Value) != want {
		t.Fatalf("Get %s = %q, want %q", abbreviate(key), it.Value, want)
	}
}
