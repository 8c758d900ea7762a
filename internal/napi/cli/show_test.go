package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gocached/gocached/internal/napi"
)

// nicLister is a multi-queue NIC whose driver maps queues to NAPIs.
type nicLister struct{}

func (nicLister) NAPIs(int) ([]napi.NAPI, error) {
	return []napi.NAPI{
		{ID: 8202, Ifindex: 99999, IRQ: 141, Knobs: napi.Knobs{DeferHardIRQs: napi.Uint32(100), GROFlushTimeout: napi.Uint64(20000), IRQSuspendTimeout: napi.Uint64(20000000)}},
		{ID: 8201, Ifindex: 99999, IRQ: 140, PID: 77},
	}, nil
}

func (nicLister) Queues(int) ([]napi.Queue, error) {
	return []napi.Queue{
		{ID: 0, Ifindex: 99999, Type: napi.QueueRX, NAPIID: 8201}, {ID: 1, Ifindex: 99999, Type: napi.QueueRX, NAPIID: 8202},
		{ID: 0, Ifindex: 99999, Type: napi.QueueTX, NAPIID: 8201}, {ID: 1, Ifindex: 99999, Type: napi.QueueTX, NAPIID: 8202},
	}, nil
}

func TestCollectJoinsQueues(t *testing.T) {
	out, err := collect(nicLister{}, 99999)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NAPIs) != 2 || out.NAPIs[0].ID != 8201 {
		t.Fatalf("NAPIs not sorted by id: %+v", out.NAPIs)
	}
	if got := strings.Join(out.NAPIs[0].Queues, ","); got != "rx0,tx0" {
		t.Errorf("NAPI 8201 queues %q, want rx0,tx0", got)
	}
	if got := strings.Join(out.NAPIs[1].Queues, ","); got != "rx1,tx1" {
		t.Errorf("NAPI 8202 queues %q, want rx1,tx1", got)
	}
	var buf bytes.Buffer
	printTable(&env{prog: "gocached", stdout: &buf}, out, "")
	table := buf.String()
	for _, want := range []string{
		"8201  -      99999    140  77   rx0,tx0  -      -       -",
		"8202  -      99999    141  -    rx1,tx1  100    20000   20000000",
		"2 rx, 2 tx queues\n",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "does not report") {
		t.Errorf("table claims the mapping is missing:\n%s", table)
	}
}
