//go:build linux

package scenario

import (
	"errors"
	"fmt"

	"github.com/gocached/gocached/internal/napi"
	"github.com/gocached/gocached/kernel/testbed"
)

// kernelLacks is why the bed's kernel cannot run scenario sc, "" when it
// can: threadedbusy needs threaded busy polling (Linux 6.19+).
func (r *runner) kernelLacks(sc string) string {
	m, err := napi.ParseMode(sc)
	if err != nil || !m.ThreadedBusyPoll {
		return ""
	}
	return threadedBusySkip(r.bed)
}

// threadedBusySkip asks the kernel, on one of the bed's server NAPIs and
// without changing it, whether napi-set takes threaded=busy-poll; it returns
// the reason to skip, or "" when the kernel has it.
func threadedBusySkip(bed *testbed.Bed) string {
	var ok bool
	err := bed.InNS(bed.ServerNS, func() error {
		c, err := napi.Dial()
		if err != nil {
			return err
		}
		defer c.Close()
		napis, err := c.NAPIs(bed.ServerIfindex)
		if err != nil {
			return err
		}
		if len(napis) == 0 {
			return fmt.Errorf("%s has no NAPI to probe", bed.ServerDev)
		}
		ok, err = c.ProbeThreadedBusyPoll(napis[0].ID)
		return err
	})
	switch {
	case ok:
		return ""
	case errors.Is(err, napi.ErrNoThreadedBusyPoll):
		return fmt.Sprintf("the kernel lacks threaded busy polling (%s+): napi-set refused threaded=busy-poll (kernel: %s)",
			napi.ThreadedBusyPollKernel, napi.KernelWords(err))
	}
	return fmt.Sprintf("cannot tell whether the kernel has threaded busy polling: %v", err)
}
