package napi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Controller is the part of Client that Apply and Restore use.
type Controller interface {
	NAPIs(ifindex int) ([]NAPI, error)
	Set(id uint32, k Knobs) error
}

var _ Controller = (*Client)(nil)

// ErrNoNAPIs: the interface has no NAPI instance to act on (loopback, or a
// device whose queues are not NAPI-driven); the caller runs as base.
var ErrNoNAPIs = errors.New("interface has no NAPI instances to act on")

// StateDir is where DefaultStatePath puts state files.
const StateDir = "/run/gocached"

// DefaultStatePath is the state file of interface ifname. Interface names are
// only unique within a network namespace: pass an explicit path when several
// namespaces share /run.
func DefaultStatePath(ifname string) string {
	return filepath.Join(StateDir, "napi-"+ifname+".json")
}

// State is what Apply saved: the knob values found before it changed them.
type State struct {
	Interface string       `json:"interface"`
	Ifindex   int          `json:"ifindex"`
	Applied   Knobs        `json:"applied"` // what Apply set
	SavedAt   time.Time    `json:"saved_at"`
	NAPIs     []SavedKnobs `json:"napis"`
}

// SavedKnobs are one NAPI's values before Apply.
type SavedKnobs struct {
	ID uint32 `json:"id"`
	Knobs
}

// Apply sets k on every NAPI of interface ifindex, after saving the values it
// is about to change to statePath (written before the first change, so a
// crash at any point leaves a file Restore can use). If statePath already
// holds a state from an earlier run that never restored, its saved values are
// the true originals and are kept for every NAPI that still exists.
//
// On a failed Set, Apply puts back the NAPIs it already changed and returns
// the error; with no NAPIs it returns ErrNoNAPIs and changes nothing.
func Apply(c Controller, ifname string, ifindex int, k Knobs, statePath string) (*State, error) {
	if k.Empty() {
		return nil, fmt.Errorf("napi: apply on %s: no knob to set", ifname)
	}
	napis, err := c.NAPIs(ifindex)
	if err != nil {
		return nil, err
	}
	if len(napis) == 0 {
		return nil, fmt.Errorf("napi: %s (ifindex %d): %w", ifname, ifindex, ErrNoNAPIs)
	}
	// Rewrite one NAPI's current values first: a harmless write that fails
	// with ErrPermission before anything (including the state file) is
	// touched when the caller lacks CAP_NET_ADMIN.
	if probe := onlyFieldsOf(napis[0].Knobs, k); !probe.Empty() {
		if err := c.Set(napis[0].ID, probe); err != nil {
			return nil, err
		}
	}
	old, err := LoadState(statePath)
	hadFile := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	st := &State{Interface: ifname, Ifindex: ifindex, Applied: k, SavedAt: time.Now().UTC()}
	for _, n := range napis {
		saved := SavedKnobs{ID: n.ID, Knobs: onlyFieldsOf(n.Knobs, k)}
		if hadFile {
			if i := slices.IndexFunc(old.NAPIs, func(s SavedKnobs) bool { return s.ID == n.ID }); i >= 0 {
				saved.Knobs = saved.Knobs.Override(old.NAPIs[i].Knobs)
			}
		}
		st.NAPIs = append(st.NAPIs, saved)
	}
	if err := writeState(statePath, st); err != nil {
		return nil, err
	}
	for i, n := range napis {
		if err := c.Set(n.ID, k); err != nil {
			rollback := putBack(c, st.NAPIs[:i])
			if !hadFile && rollback == nil {
				os.Remove(statePath)
			}
			return nil, errors.Join(err, rollback)
		}
	}
	return st, nil
}

// onlyFieldsOf keeps the fields of cur that k is going to change.
func onlyFieldsOf(cur, k Knobs) Knobs {
	var out Knobs
	if k.DeferHardIRQs != nil {
		out.DeferHardIRQs = cur.DeferHardIRQs
	}
	if k.GROFlushTimeout != nil {
		out.GROFlushTimeout = cur.GROFlushTimeout
	}
	if k.IRQSuspendTimeout != nil {
		out.IRQSuspendTimeout = cur.IRQSuspendTimeout
	}
	if k.Threaded != nil {
		out.Threaded = cur.Threaded
	}
	return out
}

// RestoreResult says what Restore did.
type RestoreResult struct {
	State    *State
	Restored []uint32 // NAPI ids put back
	Gone     []uint32 // NAPI ids that no longer exist (device reset or removed)
}

// Restore puts back the values saved in statePath and removes the file once
// every NAPI still present has its old values again.
func Restore(c Controller, statePath string) (RestoreResult, error) {
	st, err := LoadState(statePath)
	if err != nil {
		return RestoreResult{}, err
	}
	res := RestoreResult{State: st}
	var errs []error
	for _, s := range st.NAPIs {
		if s.Knobs.Empty() {
			continue // the kernel reported nothing we changed
		}
		switch err := c.Set(s.ID, s.Knobs); {
		case err == nil:
			res.Restored = append(res.Restored, s.ID)
		case errors.Is(err, ErrNoSuchNAPI):
			res.Gone = append(res.Gone, s.ID)
		default:
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("napi: restore from %s (file kept): %w", statePath, errors.Join(errs...))
	}
	if err := os.Remove(statePath); err != nil {
		return res, fmt.Errorf("napi: restored, but: %w", err)
	}
	return res, nil
}

func putBack(c Controller, saved []SavedKnobs) error {
	var errs []error
	for _, s := range saved {
		if s.Knobs.Empty() {
			continue
		}
		if err := c.Set(s.ID, s.Knobs); err != nil && !errors.Is(err, ErrNoSuchNAPI) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("napi: rollback: %w", errors.Join(errs...))
	}
	return nil
}

// LoadState reads a state file; a missing file matches fs.ErrNotExist.
func LoadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("napi: state file: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("napi: state file %s: %w", path, err)
	}
	return &st, nil
}

// writeState replaces path atomically (temp file + rename in the same
// directory) so a crash never leaves half a state file.
func writeState(path string, st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("napi: encode state: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("napi: state dir: %w", err)
	}
	f, err := os.CreateTemp(dir, ".napi-state-*")
	if err != nil {
		return fmt.Errorf("napi: state file: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("napi: write state %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("napi: write state %s: %w", path, err)
	}
	return nil
}
