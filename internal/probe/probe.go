// Package probe detects the kernel features gocached's epoll reactors and
// NAPI control rely on, for `gocached doctor` and for the reactors' own
// decisions (use busy-poll epoll params or warn and run without them).
//
// Every probe is cheap, needs no privileges unless it says so, and answers
// with a Result that carries a sentence a person can act on.
package probe

import "fmt"

// Result is the outcome of one probe.
type Result struct {
	Feature   string // what was probed, e.g. "EPIOCSPARAMS"
	Supported bool   // the feature is usable by this process now
	Sentence  string // human explanation, including the fix when unsupported
	Err       error  // the underlying error, if any
}

func (r Result) String() string {
	state := "yes"
	if !r.Supported {
		state = "no"
	}
	return fmt.Sprintf("%s: %s: %s", r.Feature, state, r.Sentence)
}
