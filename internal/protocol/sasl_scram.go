package protocol

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"hash"

	"github.com/xdg-go/scram"
)

// SCRAM (RFC 5802) in the Cyrus setup, with github.com/xdg-go/scram doing
// the message work. As libsasl2 does with a sasldb that holds only
// userPassword (what Debian's saslpasswd2 writes), the stored keys are
// derived from the plaintext at each attempt, with a fresh salt and
// libsasl2's default iteration count. The exchange is libsasl2's as
// memcached relays it: SASL_AUTH with client-first gets server-first
// (continue), a SASL_STEP with client-final gets server-final (continue
// again), and an empty SASL_STEP ends it (Authenticated).

// scramIterations is libsasl2 2.1's scram_iteration_counter default.
const scramIterations = 4096

// scramSaltBytes is the salt length libsasl2 draws.
const scramSaltBytes = 16

// scramHashes are the SCRAM mechanisms gocached has, strongest first as
// libsasl2 lists them.
var scramHashes = []struct {
	name string
	hash scram.HashGeneratorFcn
}{
	{"SCRAM-SHA-512", scram.SHA512},
	{"SCRAM-SHA-384", func() hash.Hash { return sha512.New384() }},
	{"SCRAM-SHA-256", scram.SHA256},
	{"SCRAM-SHA-224", func() hash.Hash { return sha256.New224() }},
	{"SCRAM-SHA-1", scram.SHA1},
}

func scramHash(mech string) scram.HashGeneratorFcn {
	for _, h := range scramHashes {
		if h.name == mech {
			return h.hash
		}
	}
	return nil
}

var errSCRAMAuthz = errors.New("scram: authorization identity is not the user")

// startSCRAM begins a conversation for mechanism mech.
func (c *SASL) startSCRAM(mech string) (*scram.ServerConversation, error) {
	h := scramHash(mech)
	srv, err := h.NewServer(func(name string) (scram.StoredCredentials, error) {
		pw, ok := c.secret([]byte(name))
		if !ok {
			return scram.StoredCredentials{}, errors.New("scram: unknown user")
		}
		client, err := h.NewClient(name, string(pw), "")
		if err != nil {
			return scram.StoredCredentials{}, err
		}
		salt := make([]byte, scramSaltBytes)
		c.fillRandom(salt)
		return client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	})
	if err != nil {
		return nil, err
	}
	srv.WithNonceGenerator(func() string {
		var n [24]byte // the library's own default length
		c.fillRandom(n[:])
		return base64.StdEncoding.EncodeToString(n[:])
	})
	return srv.NewConversation(), nil
}

// scramStep feeds msg to the conversation and returns the server's reply;
// an authorization identity must name the user, as libsasl2's default
// proxy policy requires.
func (c *SASL) scramStep(conv *scram.ServerConversation, msg []byte) ([]byte, error) {
	resp, err := conv.Step(string(msg))
	if err != nil {
		return nil, err
	}
	if a := conv.AuthzID(); a != "" && c.canonical([]byte(a)) != c.canonical([]byte(conv.Username())) {
		return nil, errSCRAMAuthz
	}
	return []byte(resp), nil
}
