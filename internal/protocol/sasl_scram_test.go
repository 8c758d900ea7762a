package protocol

import (
	"testing"

	"github.com/xdg-go/scram"
)

// scramExchange runs a SCRAM client over a Session the way libmemcached
// does through libsasl2: SASL_AUTH with client-first, SASL_STEP with
// client-final, then an empty SASL_STEP after checking server-final. It
// returns the statuses the server gave and whether the client accepted the
// server's signature.
func scramExchange(t *testing.T, env *Env, mech string, h scram.HashGeneratorFcn, user, pass, authz string) (statuses []string, serverOK bool) {
	t.Helper()
	client, err := h.NewClient(user, pass, authz)
	if err != nil {
		t.Fatal(err)
	}
	conv := client.NewConversation()
	s := NewSession(env)
	first, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	op, msg := uint8(opSASLAuth), first
	for i := 0; i < 4; i++ {
		ps := packets(t, drive(t, s, []byte(binReq(op, mech, "", msg, uint32(i+1), 0))).out)
		if len(ps) != 1 {
			t.Fatalf("%d replies", len(ps))
		}
		statuses = append(statuses, ps[0][0])
		if ps[0][0] != "0021" { // not "continue": done
			return statuses, serverOK
		}
		op = opSASLStep
		if conv.Done() {
			msg = "" // libsasl2 ends with an empty step once server-final checked out
			continue
		}
		if msg, err = conv.Step(ps[0][1]); err != nil {
			return statuses, false
		}
		serverOK = conv.Done() && conv.Valid()
	}
	t.Fatalf("no end after %v", statuses)
	return nil, false
}

func TestCyrusSCRAM(t *testing.T) {
	env := newCyrusEnv(t, nil...)
	for _, h := range scramHashes {
		t.Run(h.name, func(t *testing.T) {
			st, ok := scramExchange(t, env, h.name, h.hash, "alice", "secret", "")
			if len(st) != 3 || st[0] != "0021" || st[1] != "0021" || st[2] != "0000" || !ok {
				t.Errorf("right password: statuses %v, server signature accepted %v", st, ok)
			}
			st, _ = scramExchange(t, env, h.name, h.hash, "testuser@memcached.realm", "testpass", "testuser@memcached.realm")
			if st[len(st)-1] != "0000" {
				t.Errorf("user@realm with itself as authzid: %v", st)
			}
			st, _ = scramExchange(t, env, h.name, h.hash, "alice", "wrong", "")
			if len(st) != 2 || st[1] != "0020" {
				t.Errorf("wrong password: %v", st)
			}
			st, _ = scramExchange(t, env, h.name, h.hash, "carol", "secret", "")
			if len(st) != 1 || st[0] != "0020" {
				t.Errorf("unknown user: %v", st)
			}
			st, _ = scramExchange(t, env, h.name, h.hash, "alice", "secret", "bob")
			if st[len(st)-1] != "0020" {
				t.Errorf("authzid of another user: %v", st)
			}
		})
	}
	// The wrong hash for the mechanism fails the proof; garbage fails at
	// once; an AUTH without client-first asks for it.
	if st, _ := scramExchange(t, env, "SCRAM-SHA-256", scram.SHA1, "alice", "secret", ""); st[len(st)-1] != "0020" {
		t.Errorf("SHA-1 client on SCRAM-SHA-256: %v", st)
	}
	s := NewSession(env)
	if ps := packets(t, drive(t, s, []byte(binReq(opSASLAuth, "SCRAM-SHA-1", "", "garbage", 1, 0))).out); ps[0][0] != "0020" {
		t.Errorf("garbage client-first: %q", ps)
	}
	client, _ := scram.SHA1.NewClient("alice", "secret", "")
	conv := client.NewConversation()
	first, _ := conv.Step("")
	s = NewSession(env)
	ps := packets(t, drive(t, s, []byte(binReq(opSASLAuth, "SCRAM-SHA-1", "", "", 1, 0)+binReq(opSASLStep, "SCRAM-SHA-1", "", first, 2, 0))).out)
	if len(ps) != 2 || ps[0] != [2]string{"0021", ""} || ps[1][0] != "0021" {
		t.Fatalf("empty AUTH then client-first: %q", ps)
	}
	final, err := conv.Step(ps[1][1])
	if err != nil {
		t.Fatal(err)
	}
	// libsasl2 ends the exchange on the last step whatever it carries.
	ps = packets(t, drive(t, s, []byte(binReq(opSASLStep, "SCRAM-SHA-1", "", final, 3, 0)+binReq(opSASLStep, "SCRAM-SHA-1", "", "x", 4, 0))).out)
	if len(ps) != 2 || ps[0][0] != "0021" || ps[1] != [2]string{"0000", "Authenticated"} {
		t.Errorf("a non-empty last step: %q", ps)
	}
}
