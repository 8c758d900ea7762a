package napi

import (
	"encoding/binary"
	"testing"

	"github.com/mdlayher/netlink"
)

// attr is one hand-built netlink attribute: the payload bytes are given
// verbatim so tests control their exact length.
type attr struct {
	typ  uint16
	data []byte
}

func u32b(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func u64b(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// rawAttrs lays attributes out by hand (length, type, payload, padding to 4)
// so the decoders are tested against bytes as the kernel writes them.
func rawAttrs(attrs ...attr) []byte {
	var b []byte
	for _, a := range attrs {
		b = binary.NativeEndian.AppendUint16(b, uint16(4+len(a.data)))
		b = binary.NativeEndian.AppendUint16(b, a.typ)
		b = append(b, a.data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

func TestDecodeUint(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    uint64
		wantErr bool
	}{
		{"4 bytes zero", u32b(0), 0, false},
		{"4 bytes", u32b(20000), 20000, false},
		{"4 bytes max", u32b(1<<32 - 1), 1<<32 - 1, false},
		{"8 bytes small", u64b(7), 7, false},
		{"8 bytes large", u64b(1 << 40), 1 << 40, false},
		{"empty", nil, 0, true},
		{"2 bytes", []byte{1, 0}, 0, true},
		{"6 bytes", make([]byte, 6), 0, true},
		{"16 bytes", make([]byte, 16), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeUint(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("decodeUint(%x) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("decodeUint(%x) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeUint32RejectsWide(t *testing.T) {
	if _, err := decodeUint32(u64b(1 << 33)); err == nil {
		t.Fatal("decodeUint32 accepted a 33-bit value")
	}
	if v, err := decodeUint32(u64b(100)); err != nil || v != 100 {
		t.Fatalf("decodeUint32(8-byte 100) = %d, %v", v, err)
	}
}

func TestDecodeNAPI(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    NAPI
		wantErr bool
	}{
		{
			name: "veth: no irq, 4-byte uints",
			in: rawAttrs(attr{attrNAPIID, u32b(8193)}, attr{attrNAPIIfindex, u32b(2)},
				attr{attrNAPIDeferHardIRQs, u32b(100)}, attr{attrNAPIGROFlushTimeout, u32b(20000)},
				attr{attrNAPIIRQSuspendTimeout, u32b(20000000)}),
			want: NAPI{ID: 8193, Ifindex: 2, IRQ: -1, Knobs: Knobs{
				DeferHardIRQs: Uint32(100), GROFlushTimeout: Uint64(20000), IRQSuspendTimeout: Uint64(20000000)}},
		},
		{
			name: "nic: irq, pid, threaded, 8-byte uints",
			in: rawAttrs(attr{attrNAPIIfindex, u32b(3)}, attr{attrNAPIID, u32b(9)},
				attr{attrNAPIIRQ, u32b(131)}, attr{attrNAPIPID, u32b(4242)}, attr{attrNAPIThreaded, u32b(1)},
				attr{attrNAPIDeferHardIRQs, u32b(0)}, attr{attrNAPIGROFlushTimeout, u64b(5_000_000_000)},
				attr{attrNAPIIRQSuspendTimeout, u64b(1 << 40)}),
			want: NAPI{ID: 9, Ifindex: 3, IRQ: 131, PID: 4242, Knobs: Knobs{
				DeferHardIRQs: Uint32(0), GROFlushTimeout: Uint64(5_000_000_000), IRQSuspendTimeout: Uint64(1 << 40), Threaded: Uint32(1)}},
		},
		{
			name: "6.8 kernel: no knobs reported",
			in:   rawAttrs(attr{attrNAPIID, u32b(1)}, attr{attrNAPIIfindex, u32b(1)}),
			want: NAPI{ID: 1, Ifindex: 1, IRQ: -1},
		},
		{
			name: "unknown attributes are skipped",
			in:   rawAttrs(attr{99, []byte("future")}, attr{attrNAPIID, u32b(5)}),
			want: NAPI{ID: 5, IRQ: -1},
		},
		{name: "no id", in: rawAttrs(attr{attrNAPIIfindex, u32b(1)}), wantErr: true},
		{name: "3-byte gro", in: rawAttrs(attr{attrNAPIID, u32b(1)}, attr{attrNAPIGROFlushTimeout, []byte{1, 2, 3}}), wantErr: true},
		{name: "8-byte defer too wide", in: rawAttrs(attr{attrNAPIID, u32b(1)}, attr{attrNAPIDeferHardIRQs, u64b(1 << 32)}), wantErr: true},
		{name: "truncated header", in: []byte{8, 0, 2}, wantErr: true},
		{name: "length beyond buffer", in: []byte{16, 0, 2, 0, 1, 0, 0, 0}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeNAPI(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !equalNAPI(got, tt.want) {
				t.Fatalf("got %s threaded=%s\nwant %s threaded=%s", got, optString(got.Threaded), tt.want, optString(tt.want.Threaded))
			}
		})
	}
}

func equalNAPI(a, b NAPI) bool {
	return a.ID == b.ID && a.Ifindex == b.Ifindex && a.IRQ == b.IRQ && a.PID == b.PID &&
		optString(a.Threaded) == optString(b.Threaded) && a.Knobs.String() == b.Knobs.String()
}

func TestDecodeQueue(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    Queue
		wantErr bool
	}{
		{"veth rx without napi", rawAttrs(attr{attrQueueID, u32b(3)}, attr{attrQueueIfindex, u32b(2)}, attr{attrQueueType, u32b(0)}),
			Queue{ID: 3, Ifindex: 2, Type: QueueRX}, false},
		{"nic tx with napi", rawAttrs(attr{attrQueueID, u32b(0)}, attr{attrQueueIfindex, u32b(4)}, attr{attrQueueType, u32b(1)}, attr{attrQueueNAPIID, u32b(8200)}),
			Queue{ID: 0, Ifindex: 4, Type: QueueTX, NAPIID: 8200}, false},
		{"no type", rawAttrs(attr{attrQueueID, u32b(0)}), Queue{}, true},
		{"short napi id", rawAttrs(attr{attrQueueType, u32b(0)}, attr{attrQueueNAPIID, []byte{1}}), Queue{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeQueue(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEncodeSet(t *testing.T) {
	tests := []struct {
		name string
		k    Knobs
		want map[uint16]uint64
	}{
		{"all three", Knobs{DeferHardIRQs: Uint32(100), GROFlushTimeout: Uint64(20000), IRQSuspendTimeout: Uint64(20000000)},
			map[uint16]uint64{attrNAPIID: 77, attrNAPIDeferHardIRQs: 100, attrNAPIGROFlushTimeout: 20000, attrNAPIIRQSuspendTimeout: 20000000}},
		{"defer only", Knobs{DeferHardIRQs: Uint32(0)},
			map[uint16]uint64{attrNAPIID: 77, attrNAPIDeferHardIRQs: 0}},
		{"wide timeout", Knobs{GROFlushTimeout: Uint64(1 << 36)},
			map[uint16]uint64{attrNAPIID: 77, attrNAPIGROFlushTimeout: 1 << 36}},
		{"threaded busy-poll alone", Knobs{Threaded: Uint32(ThreadedBusyPoll)},
			map[uint16]uint64{attrNAPIID: 77, attrNAPIThreaded: 2}},
		{"threaded disabled is sent, not dropped", Knobs{Threaded: Uint32(ThreadedDisabled)},
			map[uint16]uint64{attrNAPIID: 77, attrNAPIThreaded: 0}},
		{"threadedbusy preset", mustModeKnobs("threadedbusy"),
			map[uint16]uint64{attrNAPIID: 77, attrNAPIDeferHardIRQs: 100, attrNAPIGROFlushTimeout: 15000, attrNAPIIRQSuspendTimeout: 0, attrNAPIThreaded: 2}},
		{"other presets leave threaded alone", mustModeKnobs("suspend20"),
			map[uint16]uint64{attrNAPIID: 77, attrNAPIDeferHardIRQs: 100, attrNAPIGROFlushTimeout: 20000, attrNAPIIRQSuspendTimeout: 20000000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeSet(77, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint16]uint64{}
			ad, err := netlink.NewAttributeDecoder(b)
			if err != nil {
				t.Fatal(err)
			}
			for ad.Next() {
				if _, dup := got[ad.Type()]; dup {
					t.Fatalf("attribute %d twice", ad.Type())
				}
				var v uint64
				ad.Do(uintInto(&v))
				got[ad.Type()] = v
			}
			if err := ad.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got attrs %v, want %v", got, tt.want)
			}
			for typ, v := range tt.want {
				if got[typ] != v {
					t.Fatalf("attr %d = %d, want %d (all: %v)", typ, got[typ], v, got)
				}
			}
		})
	}
}

// The timeouts are kernel "uint": napi-set must send them as 8 bytes so
// values above 4 s survive, while defer-hard-irqs is a fixed u32.
func TestEncodeSetWidths(t *testing.T) {
	b, err := encodeSet(1, Knobs{DeferHardIRQs: Uint32(1), GROFlushTimeout: Uint64(2), IRQSuspendTimeout: Uint64(3), Threaded: Uint32(ThreadedBusyPoll)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := netlink.UnmarshalAttributes(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint16]int{attrNAPIID: 4, attrNAPIDeferHardIRQs: 4, attrNAPIGROFlushTimeout: 8, attrNAPIIRQSuspendTimeout: 8, attrNAPIThreaded: 4}
	for _, a := range attrs {
		if len(a.Data) != want[a.Type] {
			t.Errorf("attr %d has %d bytes, want %d", a.Type, len(a.Data), want[a.Type])
		}
	}
}

func mustModeKnobs(name string) Knobs {
	m, err := ParseMode(name)
	if err != nil {
		panic(err)
	}
	return m.Knobs()
}

// napi-get reports threaded as a u32 (6.17+): each value decodes into
// Knobs.Threaded and prints by its spec name; a kernel that does not report
// it leaves the field nil and the string as before.
func TestDecodeThreaded(t *testing.T) {
	tests := []struct {
		name    string
		attrs   []attr
		want    *uint32
		str     string
		wantErr bool
	}{
		{"absent (before 6.17)", nil, nil, "defer=- gro=-ns suspend=-ns", false},
		{"disabled", []attr{{attrNAPIThreaded, u32b(0)}}, Uint32(0), "defer=- gro=-ns suspend=-ns threaded=disabled", false},
		{"enabled", []attr{{attrNAPIThreaded, u32b(1)}}, Uint32(1), "defer=- gro=-ns suspend=-ns threaded=enabled", false},
		{"busy-poll", []attr{{attrNAPIThreaded, u32b(2)}}, Uint32(2), "defer=- gro=-ns suspend=-ns threaded=busy-poll", false},
		{"a value from a later kernel", []attr{{attrNAPIThreaded, u32b(7)}}, Uint32(7), "defer=- gro=-ns suspend=-ns threaded=7", false},
		{"short", []attr{{attrNAPIThreaded, []byte{2, 0}}}, nil, "", true},
		{"beyond 32 bits", []attr{{attrNAPIThreaded, u64b(1 << 33)}}, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := rawAttrs(append([]attr{{attrNAPIID, u32b(8193)}}, tt.attrs...)...)
			n, err := decodeNAPI(b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if (n.Threaded == nil) != (tt.want == nil) || (n.Threaded != nil && *n.Threaded != *tt.want) {
				t.Fatalf("Threaded = %v, want %v", optString(n.Threaded), optString(tt.want))
			}
			if got := n.Knobs.String(); got != tt.str {
				t.Fatalf("String() = %q, want %q", got, tt.str)
			}
		})
	}
}

func FuzzDecodeNAPI(f *testing.F) {
	f.Add(rawAttrs(attr{attrNAPIID, u32b(8193)}, attr{attrNAPIIfindex, u32b(2)}, attr{attrNAPIGROFlushTimeout, u64b(20000)}))
	f.Add(rawAttrs(attr{attrNAPIID, u32b(1)}, attr{attrNAPIIRQ, u32b(0xffffffff)}, attr{attrNAPIThreaded, u32b(2)}))
	f.Add([]byte{4, 0, 2, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeNAPI(b)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode its knobs and decode the same.
		enc, err := encodeSet(n.ID, n.Knobs)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeNAPI(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if back.ID != n.ID || back.Knobs.String() != n.Knobs.String() {
			t.Fatalf("round trip %s -> %s", n, back)
		}
	})
}

func FuzzDecodeQueue(f *testing.F) {
	f.Add(rawAttrs(attr{attrQueueID, u32b(3)}, attr{attrQueueType, u32b(0)}))
	f.Add(rawAttrs(attr{attrQueueType, u32b(1)}, attr{attrQueueNAPIID, u64b(5)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := decodeQueue(b)
		if err == nil && q.Type.String() == "" {
			t.Fatal("decoded queue with an empty type name")
		}
	})
}

// stats reactors reads the knobs back at stats time: decoding must stay cheap.
func BenchmarkDecodeNAPI(b *testing.B) {
	msg := rawAttrs(attr{attrNAPIID, u32b(8193)}, attr{attrNAPIIfindex, u32b(2)},
		attr{attrNAPIDeferHardIRQs, u32b(100)}, attr{attrNAPIGROFlushTimeout, u32b(20000)},
		attr{attrNAPIIRQSuspendTimeout, u32b(20000000)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeNAPI(msg); err != nil {
			b.Fatal(err)
		}
	}
}
