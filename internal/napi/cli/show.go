package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gocached/gocached/internal/napi"
)

// ShowNAPI is one NAPI in `napi show --json`: the kernel's view plus the
// interface name and the queues the driver says it serves.
type ShowNAPI struct {
	napi.NAPI
	Interface string   `json:"interface"`
	Queues    []string `json:"queues"` // "rx0", "tx0"; empty when the driver does not map queues (veth)
}

// ShowOutput is the whole `napi show --json` document.
type ShowOutput struct {
	NAPIs  []ShowNAPI   `json:"napis"`
	Queues []napi.Queue `json:"queues"`
}

func (e *env) show(args []string) int {
	fs := e.flags("napi show")
	iface := fs.StringP("interface", "i", "", "only this interface's NAPIs (default: every interface)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if code, stop := e.parse(fs, args); stop {
		return code
	}
	ifindex := 0
	if *iface != "" {
		ifi, err := lookupInterface(*iface)
		if err != nil {
			return e.fail(err)
		}
		ifindex = ifi.Index
	}
	c, err := dial()
	if err != nil {
		return e.fail(err)
	}
	defer c.Close()
	out, err := collect(c, ifindex)
	if err != nil {
		return e.fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return e.fail(err)
		}
		return ExitOK
	}
	printTable(e, out, *iface)
	return ExitOK
}

// lister is the part of napi.Client that show reads from.
type lister interface {
	NAPIs(ifindex int) ([]napi.NAPI, error)
	Queues(ifindex int) ([]napi.Queue, error)
}

// collect reads NAPIs and queues and joins them.
func collect(c lister, ifindex int) (ShowOutput, error) {
	napis, err := c.NAPIs(ifindex)
	if err != nil {
		return ShowOutput{}, err
	}
	queues, err := c.Queues(ifindex)
	if err != nil {
		return ShowOutput{}, err
	}
	names := ifaceNames()
	byNAPI := map[uint32][]string{}
	for _, q := range queues {
		if q.NAPIID != 0 {
			byNAPI[q.NAPIID] = append(byNAPI[q.NAPIID], fmt.Sprintf("%s%d", q.Type, q.ID))
		}
	}
	sort.Slice(napis, func(i, j int) bool {
		if napis[i].Ifindex != napis[j].Ifindex {
			return napis[i].Ifindex < napis[j].Ifindex
		}
		return napis[i].ID < napis[j].ID
	})
	out := ShowOutput{NAPIs: []ShowNAPI{}, Queues: queues}
	if out.Queues == nil {
		out.Queues = []napi.Queue{}
	}
	for _, n := range napis {
		qs := byNAPI[n.ID]
		if qs == nil {
			qs = []string{}
		}
		out.NAPIs = append(out.NAPIs, ShowNAPI{NAPI: n, Interface: names[n.Ifindex], Queues: qs})
	}
	return out, nil
}

func printTable(e *env, out ShowOutput, iface string) {
	if len(out.NAPIs) == 0 {
		where := "any interface in this network namespace"
		if iface != "" {
			where = iface
		}
		fmt.Fprintf(e.stdout, "no NAPI instances on %s (loopback and wildcard addresses have none)\n", where)
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAPI\tIFACE\tIFINDEX\tIRQ\tPID\tQUEUES\tDEFER\tGRO_NS\tSUSPEND_NS")
		for _, n := range out.NAPIs {
			irq := "-"
			if n.IRQ >= 0 {
				irq = fmt.Sprint(n.IRQ)
			}
			pid := "-"
			if n.PID != 0 {
				pid = fmt.Sprint(n.PID)
			}
			queues := "-"
			if len(n.Queues) > 0 {
				queues = strings.Join(n.Queues, ",")
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", n.ID, orDash(n.Interface), n.Ifindex, irq, pid,
				queues, opt(n.DeferHardIRQs), opt(n.GROFlushTimeout), opt(n.IRQSuspendTimeout))
		}
		tw.Flush()
	}
	// Queue counts per interface: on drivers that do not report the queue to
	// NAPI mapping (veth) this is the only queue information there is.
	type counts struct{ rx, tx, mapped int }
	per := map[uint32]*counts{}
	var order []uint32
	for _, q := range out.Queues {
		c := per[q.Ifindex]
		if c == nil {
			c = &counts{}
			per[q.Ifindex] = c
			order = append(order, q.Ifindex)
		}
		switch q.Type {
		case napi.QueueRX:
			c.rx++
		case napi.QueueTX:
			c.tx++
		}
		if q.NAPIID != 0 {
			c.mapped++
		}
	}
	names := ifaceNames()
	for _, idx := range order {
		c := per[idx]
		note := ""
		if c.mapped == 0 && c.rx+c.tx > 0 {
			note = " (driver does not report which NAPI serves each queue)"
		}
		fmt.Fprintf(e.stdout, "# %s (ifindex %d): %d rx, %d tx queues%s\n", orDash(names[idx]), idx, c.rx, c.tx, note)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func opt[T uint32 | uint64](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}
