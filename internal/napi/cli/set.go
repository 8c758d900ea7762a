package cli

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/gocached/gocached/internal/napi"
)

// knobFlags registers --defer-hard-irqs, --gro-flush-timeout and
// --irq-suspend-timeout; knobs returns only those given on the command line.
type knobFlags struct {
	fs      *pflag.FlagSet
	deferN  *uint32
	groNs   *uint64
	suspend *uint64
}

func addKnobFlags(fs *pflag.FlagSet) knobFlags {
	return knobFlags{
		fs:      fs,
		deferN:  fs.Uint32("defer-hard-irqs", 0, "polls to defer hard IRQs for (0 = off)"),
		groNs:   fs.Uint64("gro-flush-timeout", 0, "GRO flush / IRQ deferral timeout in ns"),
		suspend: fs.Uint64("irq-suspend-timeout", 0, "IRQ suspension timeout in ns (kernel 6.13+)"),
	}
}

func (f knobFlags) knobs() napi.Knobs {
	var k napi.Knobs
	if f.fs.Changed("defer-hard-irqs") {
		k.DeferHardIRQs = napi.Uint32(*f.deferN)
	}
	if f.fs.Changed("gro-flush-timeout") {
		k.GROFlushTimeout = napi.Uint64(*f.groNs)
	}
	if f.fs.Changed("irq-suspend-timeout") {
		k.IRQSuspendTimeout = napi.Uint64(*f.suspend)
	}
	return k
}

func (e *env) set(args []string) int {
	fs := e.flags("napi set")
	id := fs.Uint32("id", 0, "NAPI id (see napi show)")
	kf := addKnobFlags(fs)
	if code, stop := e.parse(fs, args); stop {
		return code
	}
	if !fs.Changed("id") {
		return e.usage("napi set: --id is required")
	}
	k := kf.knobs()
	if k.Empty() {
		return e.usage("napi set: give at least one of --defer-hard-irqs, --gro-flush-timeout, --irq-suspend-timeout")
	}
	c, err := dial()
	if err != nil {
		return e.fail(err)
	}
	defer c.Close()
	if err := c.Set(*id, k); err != nil {
		return e.fail(err)
	}
	n, err := c.NAPI(*id)
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(e.stdout, "napi %d: %s\n", n.ID, n.Knobs)
	return ExitOK
}

func (e *env) apply(args []string) int {
	fs := e.flags("napi apply")
	iface := fs.StringP("interface", "i", "", "interface whose NAPIs to set (required)")
	mode := fs.String("poll-mode", "", "preset: base, deferX, napibusy, fullbusy, suspend0, suspendX (X in µs) or threadedbusy")
	state := fs.String("state", "", "state file for the old values (default "+napi.DefaultStatePath("NAME")+")")
	kf := addKnobFlags(fs)
	if code, stop := e.parse(fs, args); stop {
		return code
	}
	if *iface == "" {
		return e.usage("napi apply: --interface is required")
	}
	var k napi.Knobs
	if *mode != "" {
		m, err := napi.ParseMode(*mode)
		if err != nil {
			return e.usage("napi apply: " + err.Error())
		}
		k = m.Knobs()
	}
	k = k.Override(kf.knobs()) // explicit knob flags beat the preset
	if k.Empty() {
		return e.usage("napi apply: give --poll-mode or at least one knob flag")
	}
	ifi, err := lookupInterface(*iface)
	if err != nil {
		return e.fail(err)
	}
	path := *state
	if path == "" {
		path = napi.DefaultStatePath(ifi.Name)
	}
	c, err := dial()
	if err != nil {
		return e.fail(err)
	}
	defer c.Close()
	st, err := napi.Apply(c, ifi.Name, ifi.Index, k, path)
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(e.stdout, "%s: %s on %d NAPIs; old values saved to %s (undo: %s napi restore --interface %s --state %s)\n",
		ifi.Name, k, len(st.NAPIs), path, e.prog, ifi.Name, path)
	return ExitOK
}

func (e *env) restore(args []string) int {
	fs := e.flags("napi restore")
	iface := fs.StringP("interface", "i", "", "interface whose saved values to put back")
	state := fs.String("state", "", "state file (default "+napi.DefaultStatePath("NAME")+")")
	if code, stop := e.parse(fs, args); stop {
		return code
	}
	if *iface == "" && *state == "" {
		return e.usage("napi restore: --interface (or --state) is required")
	}
	path := *state
	if path == "" {
		path = napi.DefaultStatePath(*iface)
	}
	st, err := napi.LoadState(path)
	if err != nil {
		return e.fail(fmt.Errorf("nothing to restore for %s: %w", orDash(*iface), err))
	}
	if *iface != "" && st.Interface != *iface {
		return e.fail(fmt.Errorf("state file %s belongs to interface %s, not %s", path, st.Interface, *iface))
	}
	c, err := dial()
	if err != nil {
		return e.fail(err)
	}
	defer c.Close()
	res, err := napi.Restore(c, path)
	if err != nil {
		return e.fail(err)
	}
	fmt.Fprintf(e.stdout, "%s: restored %d NAPIs from %s", st.Interface, len(res.Restored), path)
	if len(res.Gone) > 0 {
		fmt.Fprintf(e.stdout, "; %d no longer exist (device reset): %v", len(res.Gone), res.Gone)
	}
	fmt.Fprintln(e.stdout)
	return ExitOK
}
