package cli

import (
	"errors"
	"fmt"

	"github.com/gocached/gocached/internal/napi"
)

// threadedBusyFacts are the kernel's two answers about threaded busy
// polling: its napi-set policy (readable by anyone) and a napi-set that
// carries threaded=busy-poll on a real NAPI but can never be applied
// (napi.Client.ProbeThreadedBusyPoll).
type threadedBusyFacts struct {
	policyOK  bool
	policyErr error // reading the policy failed; policyOK means nothing then

	probedID uint32 // the NAPI probed; 0 when there was none
	probeOK  bool
	probeErr error // the kernel's refusal (napi.ErrNoThreadedBusyPoll) or why the probe failed
}

// probe asks the kernel through NAPI id.
func (t *threadedBusyFacts) probe(c *napi.Client, id uint32) {
	t.probedID = id
	t.probeOK, t.probeErr = c.ProbeThreadedBusyPoll(id)
}

// verdict is the answer doctor reports: the probe's where it got one from
// the kernel, the policy's otherwise; known is false when neither answered.
func (t threadedBusyFacts) verdict() (ok, known bool, how string) {
	probed := t.probedID != 0 && (t.probeErr == nil || errors.Is(t.probeErr, napi.ErrNoThreadedBusyPoll))
	switch {
	case probed && t.probeOK:
		return true, true, fmt.Sprintf("napi-set on NAPI %d takes threaded=busy-poll (probed with a request that cannot apply: nothing changed)", t.probedID)
	case probed:
		return false, true, fmt.Sprintf("napi-set on NAPI %d refused threaded=busy-poll (kernel: %s)", t.probedID, napi.KernelWords(t.probeErr))
	}
	why := "no NAPI to probe"
	if t.probedID != 0 {
		why = fmt.Sprintf("probe on NAPI %d failed: %v", t.probedID, t.probeErr)
	}
	if t.policyErr != nil {
		return false, false, fmt.Sprintf("unknown: %s; reading napi-set's policy failed: %v", why, t.policyErr)
	}
	if t.policyOK {
		return true, true, "napi-set's policy allows threaded=busy-poll (" + why + ")"
	}
	return false, true, "napi-set's policy does not allow threaded=busy-poll (" + why + ")"
}

// judgeThreadedBusy reports threaded busy polling: a FAIL only when the
// requested mode is threadedbusy; otherwise a kernel without it is a fact,
// not a problem.
func judgeThreadedBusy(r *report, t threadedBusyFacts, requested bool) {
	const topic = "threaded busy-poll"
	ok, known, how := t.verdict()
	switch {
	case ok:
		r.add(OK, topic, "supported: %s", how)
	case !known:
		r.problem(false, topic, "%s", how)
	case requested:
		r.add(FAIL, topic, "not supported by this kernel: %s; fix: %s+ (or another poll mode)", how, napi.ThreadedBusyPollKernel)
	default:
		r.add(OK, topic, "not supported by this kernel (%s+ has it; only --poll-mode threadedbusy needs it): %s", napi.ThreadedBusyPollKernel, how)
	}
}
