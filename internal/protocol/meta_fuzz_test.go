package protocol

import "testing"

// FuzzMeta drives meta command streams whole, split in two and in small
// chunks: the parser must not panic or misreport what it consumed, and the
// replies must not depend on how the input arrived. Seeds are the meta
// scripts; stores are tiny so that each input costs little.
func FuzzMeta(f *testing.F) {
	for _, sc := range metaScripts {
		if len(sc.in) <= maxFuzzInput {
			f.Add([]byte(sc.in), uint16(len(sc.in)/3))
		}
	}
	f.Add([]byte("ms a 5 T0 F1 c k Oq b\r\nhello\r\nmg a v t f c k s h l Oq\r\nma a N0 J5 v\r\n"), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		if len(data) > maxFuzzInput {
			return
		}
		whole := drive(t, NewSession(newTinyStillEnv(t)), data)
		whole.out = normalizeMeta(whole.out)
		i := int(cut) % (len(data) + 1)
		split := drive(t, NewSession(newTinyStillEnv(t)), data[:i], data[i:])
		split.out = normalizeMeta(split.out)
		if !cutsMayDiffer(split, whole) && split != whole {
			t.Fatalf("split at %d changed the replies\nwhole: %q\nsplit: %q", i, whole.out, split.out)
		}
		size := int(cut)%5 + 1
		var chunks [][]byte
		for rest := data; len(rest) > 0; rest = rest[min(size, len(rest)):] {
			chunks = append(chunks, rest[:min(size, len(rest))])
		}
		chunked := drive(t, NewSession(newTinyStillEnv(t)), chunks...)
		chunked.out = normalizeMeta(chunked.out)
		if !cutsMayDiffer(chunked, whole) && chunked != whole {
			t.Fatalf("chunks of %d changed the replies\nwhole:   %q\nchunked: %q", size, whole.out, chunked.out)
		}
	})
}
