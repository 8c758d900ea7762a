package protocol

import "testing"

// FuzzBinary drives binary request streams (the seeds are the binary and
// SASL scripts) whole and split: the framing must never panic, misreport
// what it consumed, or answer differently depending on how the bytes came.
// A seed byte selects SASL so that the authentication paths are fuzzed too.
func FuzzBinary(f *testing.F) {
	for _, sc := range binScripts {
		if len(sc.in) <= 4*maxFuzzInput {
			f.Add([]byte(sc.in), uint16(len(sc.in)/2), false)
		}
	}
	for _, sc := range saslScripts {
		f.Add([]byte(sc.in), uint16(len(sc.in)/3), true)
	}
	// Cyrus setup seeds: the cut's top bit selects it over the password
	// file, so CRAM-MD5's and SCRAM's states are fuzzed too.
	for _, mech := range []string{"CRAM-MD5", "SCRAM-SHA-256", "PLAIN"} {
		in := binReq(opSASLList, "", "", "", 1, 0) + binReq(opSASLAuth, mech, "", "", 2, 0) +
			binReq(opSASLStep, mech, "", "n,,n=alice,r=abc", 3, 0) + binReq(opSASLStep, mech, "", "alice 0123", 4, 0) + binReq(opNoop, "", "", "", 5, 0)
		f.Add([]byte(in), uint16(0x8000|len(in)/2), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, sasl bool) {
		if len(data) > 4*maxFuzzInput {
			return
		}
		cyrus := cut&0x8000 != 0
		env := func() *Env {
			e := newTinyStillEnv(t)
			switch {
			case sasl && cyrus:
				e.SASL, _ = NewCyrusSASL(nil, "h", cyrusSecret)
				e.SASL.random = func(b []byte) { clear(b) } // repeatable challenges
			case sasl:
				e.SASL = &SASL{PasswordFile: "/nonexistent"}
				e.SASL.offer([]string{saslPlain})
			}
			return e
		}
		whole := drive(t, NewSession(env()), data)
		i := int(cut) % (len(data) + 1)
		split := drive(t, NewSession(env()), data[:i], data[i:])
		if !cutsMayDiffer(split, whole) && describePackets(split.out, split.closed) != describePackets(whole.out, whole.closed) {
			t.Fatalf("split at %d changed the replies\nwhole:\n%s\nsplit:\n%s", i,
				describePackets(whole.out, whole.closed), describePackets(split.out, split.closed))
		}
		size := int(cut)%9 + 1
		var chunks [][]byte
		for rest := data; len(rest) > 0; rest = rest[min(size, len(rest)):] {
			chunks = append(chunks, rest[:min(size, len(rest))])
		}
		chunked := drive(t, NewSession(env()), chunks...)
		if !cutsMayDiffer(chunked, whole) && describePackets(chunked.out, chunked.closed) != describePackets(whole.out, whole.closed) {
			t.Fatalf("chunks of %d changed the replies", size)
		}
	})
}
