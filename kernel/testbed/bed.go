//go:build linux

package testbed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// The bed's fixed shape; kernel/testbed.sh uses the same values.
const (
	Queues    = 4
	ServerDev = "srv0"
	ClientDev = "cli0"
	ServerIP  = "10.213.0.1"
	ClientIP  = "10.213.0.2"
	Prefix    = 30
	// NamePrefix starts every generated bed name; Sweep removes only those.
	NamePrefix = "gct-"
)

// Bed is one built testbed.
type Bed struct {
	Name                 string
	Variant              Variant // as built, defaults filled in
	ServerKthreads       []int   // threaded NAPI kthread pids of ServerDev (Variant.Threaded)
	ClientKthreads       []int   // threaded NAPI kthread pids of ClientDev
	ServerNS, ClientNS   string  // network namespace names (ip netns)
	ServerDev, ClientDev string  // the veth ends, one per namespace
	ServerIP, ClientIP   string  // addresses on those ends (a /30)
	ServerIfindex        int     // ifindex of ServerDev inside ServerNS
	ClientIfindex        int     // ifindex of ClientDev inside ClientNS
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,199}$`)

// UniqueName returns a fresh bed name: the pid keeps concurrent processes
// apart and lets Sweep find leftovers of dead ones; the random part survives
// pid reuse.
func UniqueName() string {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return fmt.Sprintf("%s%d-%s", NamePrefix, os.Getpid(), hex.EncodeToString(b[:]))
}

// New builds the bed called name ("" picks UniqueName). Building an existing
// bed again is fine: every step is idempotent. On failure whatever was built
// is removed again.
func New(name string) (*Bed, error) { return NewVariant(name, Variant{}) }

// NewVariant builds the bed called name in variant v (see Variant). Building
// an existing bed again with another queue count is refused: the queue count
// is fixed when the veth pair is created.
func NewVariant(name string, v Variant) (*Bed, error) {
	v, err := v.withDefaults()
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = UniqueName()
	}
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("testbed: bad name %q (letters, digits, . _ - only)", name)
	}
	if err := Available(); err != nil {
		return nil, err
	}
	b := &Bed{
		Name:      name,
		Variant:   v,
		ServerNS:  name + "-srv",
		ClientNS:  name + "-cli",
		ServerDev: ServerDev,
		ClientDev: ClientDev,
		ServerIP:  ServerIP,
		ClientIP:  ClientIP,
	}
	if err := b.build(); err != nil {
		if cerr := b.Close(); cerr != nil {
			err = fmt.Errorf("%w (teardown: %v)", err, cerr)
		}
		return nil, err
	}
	return b, nil
}

// run executes one setup command and folds its output into the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func nsExists(ns string) bool {
	_, err := os.Stat("/var/run/netns/" + ns)
	return err == nil
}

func (b *Bed) build() error {
	for _, ns := range []string{b.ServerNS, b.ClientNS} {
		if !nsExists(ns) {
			if err := run("ip", "netns", "add", ns); err != nil {
				return err
			}
		}
		if err := run("ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
			return err
		}
	}
	if run("ip", "-n", b.ServerNS, "link", "show", b.ServerDev) != nil {
		// A half-built bed may have left the peer behind; ignore its absence.
		_ = run("ip", "-n", b.ClientNS, "link", "del", b.ClientDev)
		q := fmt.Sprint(b.Variant.Queues)
		// Creating each end directly in its namespace keeps the root
		// namespace's device names out of the picture.
		if err := run("ip", "link", "add", "name", b.ServerDev, "netns", b.ServerNS,
			"numtxqueues", q, "numrxqueues", q, "type", "veth",
			"peer", "name", b.ClientDev, "netns", b.ClientNS,
			"numtxqueues", q, "numrxqueues", q); err != nil {
			return err
		}
	}
	ends := []struct{ ns, dev, ip string }{
		{b.ServerNS, b.ServerDev, b.ServerIP},
		{b.ClientNS, b.ClientDev, b.ClientIP},
	}
	for _, e := range ends {
		if err := run("ip", "-n", e.ns, "addr", "replace", fmt.Sprintf("%s/%d", e.ip, Prefix), "dev", e.dev); err != nil {
			return err
		}
		if err := run("ip", "-n", e.ns, "link", "set", e.dev, "up"); err != nil {
			return err
		}
	}
	for _, e := range ends {
		if err := enableNAPI(e.ns, e.dev); err != nil {
			return err
		}
	}
	var err error
	if b.ServerIfindex, err = ifindex(b.ServerNS, b.ServerDev); err != nil {
		return err
	}
	if b.ClientIfindex, err = ifindex(b.ClientNS, b.ClientDev); err != nil {
		return err
	}
	if rx, _, err := QueueCounts(b.ServerNS, b.ServerDev); err != nil {
		return err
	} else if rx != b.Variant.Queues {
		return fmt.Errorf("bed %s exists with %d queues, want %d: take it down first", b.Name, rx, b.Variant.Queues)
	}
	return b.applyThreading()
}

// enableNAPI gives dev its per-queue NAPIs. veth creates them when its GRO
// feature turns on (or is on when the device comes up); toggling off then
// on forces that edge whatever the previous state. TSO must be off on the
// sending end: veth sends skbs from a TSO-capable device past its NAPIs
// (netif_rx), so TCP would never carry a NAPI ID. A bed that already has
// GRO on and TSO off is left alone, because every toggle replaces the
// NAPIs, with new IDs and reset per-NAPI settings.
func enableNAPI(ns, dev string) error {
	out, err := exec.Command("ip", "netns", "exec", ns, "ethtool", "-k", dev).Output()
	if err != nil {
		return fmt.Errorf("ethtool -k %s in %s: %w", dev, ns, err)
	}
	gro, tso := featureOn(out, "generic-receive-offload"), featureOn(out, "tcp-segmentation-offload")
	if gro && !tso {
		return nil
	}
	for _, feat := range [][]string{{"gro", "off"}, {"gro", "on"}, {"tso", "off"}} {
		if err := run("ip", "netns", "exec", ns, "ethtool", "-K", dev, feat[0], feat[1]); err != nil {
			return err
		}
	}
	return nil
}

// featureOn reads one "name: on|off [fixed]" line of `ethtool -k`.
func featureOn(ethtoolK []byte, name string) bool {
	for _, line := range strings.Split(string(ethtoolK), "\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return strings.HasPrefix(v, "on")
		}
	}
	return false
}

// linkInfo is the part of `ip -d -j link show` the bed reads.
type linkInfo struct {
	Ifindex     int    `json:"ifindex"`
	Ifname      string `json:"ifname"`
	NumRxQueues int    `json:"num_rx_queues"`
	NumTxQueues int    `json:"num_tx_queues"`
}

func showLink(ns, dev string) (linkInfo, error) {
	out, err := exec.Command("ip", "-n", ns, "-d", "-j", "link", "show", "dev", dev).Output()
	if err != nil {
		return linkInfo{}, fmt.Errorf("ip -n %s link show %s: %w", ns, dev, err)
	}
	var links []linkInfo
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return linkInfo{}, fmt.Errorf("ip -n %s link show %s: unexpected output %q", ns, dev, out)
	}
	return links[0], nil
}

func ifindex(ns, dev string) (int, error) {
	l, err := showLink(ns, dev)
	return l.Ifindex, err
}

// Close tears the bed down; closing a missing or half-built bed is fine.
// Deleting a namespace destroys its veth end and with it the peer. Processes
// still running inside keep their namespace alive until they exit, so stop
// them first.
func (b *Bed) Close() error {
	var errs []error
	for _, ns := range []string{b.ServerNS, b.ClientNS} {
		if ns != "" && nsExists(ns) {
			if err := run("ip", "netns", "del", ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Exists reports whether both namespaces of the bed are present.
func (b *Bed) Exists() bool { return nsExists(b.ServerNS) && nsExists(b.ClientNS) }

// ServerCmd prepares name args... to run inside the server namespace.
func (b *Bed) ServerCmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	return NSCmd(ctx, b.ServerNS, name, args...)
}

// ClientCmd prepares name args... to run inside the client namespace.
func (b *Bed) ClientCmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	return NSCmd(ctx, b.ClientNS, name, args...)
}

// NSCmd prepares `ip netns exec ns name args...`. ip netns exec also mounts
// a sysfs of that namespace, so /sys/class/net shows its devices.
func NSCmd(ctx context.Context, ns, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
}

// QueueCounts counts the rx and tx queues of dev in ns as sysfs lists them
// (/sys/class/net/DEV/queues, i.e. the real queue counts in use).
func QueueCounts(ns, dev string) (rx, tx int, err error) {
	out, err := exec.Command("ip", "netns", "exec", ns, "ls", "/sys/class/net/"+dev+"/queues").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("listing queues of %s in %s: %w", dev, ns, err)
	}
	for _, f := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(f, "rx-"):
			rx++
		case strings.HasPrefix(f, "tx-"):
			tx++
		}
	}
	return rx, tx, nil
}
