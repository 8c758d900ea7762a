package protocol

// authState is the client's login: the binary protocol's SASL exchange
// (-S, sasl.go) or the text protocol's auth line (-Y, auth.go).
type authState struct {
	// saslPassed: a SASL exchange succeeded; memcached starts every new
	// one unauthenticated.
	saslPassed bool
	sasl       saslExchange
	// textPassed: the -Y login line was accepted.
	textPassed bool
}

// reset prepares the state for a new connection, keeping the challenge
// buffer for reuse.
func (a *authState) reset() {
	*a = authState{sasl: saslExchange{challenge: a.sasl.challenge[:0]}}
}
