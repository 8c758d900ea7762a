package integration

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
)

// The sequential specification the linearizability test checks histories
// against: one memcached key, with values abstracted to numbers and CAS
// uniques to what a client can observe of them.
//
// A real unique is opaque, so the model cannot predict it; it learns it. The
// state of a key is its value plus the unique of its current version if some
// gets has observed it (cur), and the largest unique any earlier version was
// seen with (last). Every mutation (set, successful cas, incr, delete) makes
// a new version whose unique is unknown (cur = 0). A gets linearized on a
// version whose unique is unknown binds it, and the unique must be fresh:
// memcached and gocached hand uniques out from counters (gocached: one per
// store shard, and a key stays in its shard), so every new version of a key
// has a larger unique than all before it. A gets on a version already bound
// must return the same unique. A cas succeeds iff the key exists and its
// unique is the bound unique of the current version; a client only ever
// sends a unique its own earlier gets returned, and that gets is linearized
// before the cas, so a version whose unique is unknown to the model cannot
// carry the client's unique. This catches the classic CAS bugs: a cas that
// succeeds after the value was replaced (even by the same value), a cas that
// fails against an untouched version, and a write that keeps the old unique.

// linKind is an operation of the history.
type linKind uint8

const (
	linGet linKind = iota
	linGets
	linSet
	linCas
	linDelete
	linIncr
)

var linKindNames = [...]string{"get", "gets", "set", "cas", "delete", "incr"}

func (k linKind) String() string { return linKindNames[k] }

// linResult is a storage or delete reply.
type linResult uint8

const (
	resNone linResult = iota
	resStored
	resExists
	resNotFound
	resDeleted
)

var linResultNames = [...]string{"-", "STORED", "EXISTS", "NOT_FOUND", "DELETED"}

func (r linResult) String() string { return linResultNames[r] }

// linInput is one request: val is the value of set and cas, unique the CAS
// unique cas sends, delta the amount of incr.
type linInput struct {
	kind   linKind
	key    int
	val    uint64
	unique uint64
	delta  uint64
}

// linOutput is the reply: found, val and unique for get/gets and incr (val
// is incr's new value), res for set, cas and delete (and NOT_FOUND of incr).
type linOutput struct {
	found  bool
	val    uint64
	unique uint64
	res    linResult
}

// linState is one key. It is a comparable value, which porcupine's default
// equality and its memoisation rely on.
type linState struct {
	exists bool
	val    uint64
	cur    uint64 // unique of the current version once a gets saw it, else 0
	last   uint64 // largest unique seen for any version so far
}

// newVersion is the state after a mutation that leaves the key holding v.
func (s linState) newVersion(v uint64) linState {
	return linState{exists: true, val: v, last: s.last}
}

// linStep is the model's transition: whether out is a legal reply to in
// from state s, and the state after it.
func linStep(s linState, in linInput, out linOutput) (bool, linState) {
	return linStepUniques(s, in, out, true)
}

// linStepUniques is linStep; increasing says whether a new version's unique
// must be larger than every earlier one's, or only new. memcached 1.6.45's
// text set takes its unique before it locks the key (store_item is called
// with get_cas_id() in proto_parser.c), so an incr that locks the key in
// between links a version with a larger unique first, and the set's version
// then carries a smaller one.
func linStepUniques(s linState, in linInput, out linOutput, increasing bool) (bool, linState) {
	switch in.kind {
	case linGet:
		if !s.exists {
			return !out.found, s
		}
		return out.found && out.val == s.val, s
	case linGets:
		if !s.exists {
			return !out.found, s
		}
		if !out.found || out.val != s.val || out.unique == 0 {
			return false, s
		}
		if s.cur != 0 {
			return out.unique == s.cur, s
		}
		if out.unique == s.last || increasing && out.unique < s.last {
			return false, s // an earlier version's unique, or not increasing
		}
		s.cur, s.last = out.unique, max(s.last, out.unique)
		return true, s
	case linSet:
		return out.res == resStored, s.newVersion(in.val)
	case linCas:
		switch {
		case !s.exists:
			return out.res == resNotFound, s
		case s.cur != 0 && in.unique == s.cur:
			return out.res == resStored, s.newVersion(in.val)
		default:
			return out.res == resExists, s
		}
	case linDelete:
		if !s.exists {
			return out.res == resNotFound, s
		}
		return out.res == resDeleted, linState{last: s.last}
	case linIncr:
		if !s.exists {
			return out.res == resNotFound, s
		}
		v := s.val + in.delta // memcached's incr wraps at 2^64, as Go's addition
		return out.found && out.val == v, s.newVersion(v)
	}
	return false, s
}

// linModelReference is linModel for memcached 1.6.45: new uniques, not
// increasing ones (linStepUniques).
var linModelReference = func() porcupine.Model {
	m := linModel
	m.Step = func(state, input, output any) (bool, any) {
		return linStepUniques(state.(linState), input.(linInput), output.(linOutput), false)
	}
	return m
}()

// linModel is linStep as a porcupine model, partitioned by key: operations
// on different keys commute, so each key is checked on its own.
var linModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range history {
			k := op.Input.(linInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		parts := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		return linStep(state.(linState), input.(linInput), output.(linOutput))
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		switch in.kind {
		case linGet, linGets:
			if !out.found {
				return fmt.Sprintf("%v(k%d) -> miss", in.kind, in.key)
			}
			return fmt.Sprintf("%v(k%d) -> %d u%d", in.kind, in.key, out.val, out.unique)
		case linSet:
			return fmt.Sprintf("set(k%d, %d) -> %v", in.key, in.val, out.res)
		case linCas:
			return fmt.Sprintf("cas(k%d, %d, u%d) -> %v", in.key, in.val, in.unique, out.res)
		case linDelete:
			return fmt.Sprintf("delete(k%d) -> %v", in.key, out.res)
		case linIncr:
			if !out.found {
				return fmt.Sprintf("incr(k%d, %d) -> %v", in.key, in.delta, out.res)
			}
			return fmt.Sprintf("incr(k%d, %d) -> %d", in.key, in.delta, out.val)
		}
		return "?"
	},
	DescribeState: func(state any) string {
		s := state.(linState)
		if !s.exists {
			return fmt.Sprintf("absent (last u%d)", s.last)
		}
		return fmt.Sprintf("%d (u%d, last u%d)", s.val, s.cur, s.last)
	},
}

// op builds a history entry for the model tests.
func op(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestLinModel feeds the model hand-made histories, legal and not: the
// linearizability test can only fail on a broken server if the model
// rejects what a broken server produces.
func TestLinModel(t *testing.T) {
	set := func(v uint64) linInput { return linInput{kind: linSet, val: v} }
	gets := linInput{kind: linGets}
	cas := func(u, v uint64) linInput { return linInput{kind: linCas, val: v, unique: u} }
	hit := func(v, u uint64) linOutput { return linOutput{found: true, val: v, unique: u} }
	res := func(r linResult) linOutput { return linOutput{res: r} }
	stored, exists := res(resStored), res(resExists)
	cases := []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"cas after gets", true, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(0, 4, 5, cas(10, 2), stored), op(1, 6, 7, gets, hit(2, 11)),
		}},
		{"cas succeeds after a later set (broken CAS)", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(1, 4, 5, set(2), stored), op(0, 6, 7, cas(10, 3), stored),
		}},
		{"cas succeeds after the same value was set again (ABA)", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(1, 4, 5, set(1), stored), op(0, 6, 7, cas(10, 3), stored),
		}},
		{"cas concurrent with a set may win", true, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(1, 4, 9, set(2), stored), op(0, 5, 8, cas(10, 3), stored),
			op(2, 10, 11, linInput{kind: linGet}, hit(2, 0)),
		}},
		{"cas fails on an untouched version", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(0, 4, 5, cas(10, 2), exists),
		}},
		{"two cas with one unique both succeed", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)), op(1, 2, 3, gets, hit(1, 10)),
			op(0, 4, 6, cas(10, 2), stored), op(1, 5, 7, cas(10, 3), stored),
		}},
		{"a new version keeps the old unique", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(0, 4, 5, set(2), stored), op(0, 6, 7, gets, hit(2, 10)),
		}},
		{"incr makes a new version", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
			op(1, 4, 5, linInput{kind: linIncr, delta: 2}, linOutput{found: true, val: 3}),
			op(0, 6, 7, cas(10, 9), stored),
		}},
		{"stale read", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, set(2), stored),
			op(1, 4, 5, linInput{kind: linGet}, hit(1, 0)),
		}},
		{"read of a deleted key", false, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 3, linInput{kind: linDelete}, res(resDeleted)),
			op(1, 4, 5, linInput{kind: linGet}, hit(1, 0)),
		}},
		{"concurrent delete and get", true, []porcupine.Operation{
			op(0, 0, 1, set(1), stored), op(0, 2, 5, linInput{kind: linDelete}, res(resDeleted)),
			op(1, 3, 4, linInput{kind: linGet}, hit(1, 0)), op(1, 6, 7, linInput{kind: linGet}, linOutput{}),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := porcupine.CheckOperations(linModel, c.h)
			if got != c.ok {
				t.Fatalf("linearizable = %v, want %v", got, c.ok)
			}
		})
	}
}

// TestLinModelReference: memcached 1.6.45's set takes its unique before it
// locks the key, so an incr that runs meanwhile links its version first
// with a larger unique (TestLinearizability/memcached caught it): the strict
// model rejects that history, the reference's accepts it, and both still
// reject a version that reuses an earlier version's unique.
func TestLinModelReference(t *testing.T) {
	set := func(v uint64) linInput { return linInput{kind: linSet, val: v} }
	gets := linInput{kind: linGets}
	hit := func(v, u uint64) linOutput { return linOutput{found: true, val: v, unique: u} }
	stored := linOutput{res: resStored}
	early := []porcupine.Operation{
		op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
		op(1, 4, 20, set(5), stored), // took u11, linked after the incr
		op(2, 5, 6, linInput{kind: linIncr, delta: 1}, linOutput{found: true, val: 2}),
		op(2, 7, 8, gets, hit(2, 12)),
		op(3, 21, 22, gets, hit(5, 11)),
		op(3, 23, 24, linInput{kind: linCas, val: 9, unique: 11}, stored),
	}
	reused := []porcupine.Operation{
		op(0, 0, 1, set(1), stored), op(0, 2, 3, gets, hit(1, 10)),
		op(0, 4, 5, set(2), stored), op(0, 6, 7, gets, hit(2, 10)),
	}
	for _, c := range []struct {
		name  string
		model porcupine.Model
		h     []porcupine.Operation
		ok    bool
	}{
		{"strict, unique taken early", linModel, early, false},
		{"reference, unique taken early", linModelReference, early, true},
		{"strict, unique reused", linModel, reused, false},
		{"reference, unique reused", linModelReference, reused, false},
	} {
		if got := porcupine.CheckOperations(c.model, c.h); got != c.ok {
			t.Errorf("%s: linearizable = %v, want %v", c.name, got, c.ok)
		}
	}
}

// TestCASRewriteRace: the signature of memcached's incr race is two gets
// of one key with one unique and different values, and nothing else.
func TestCASRewriteRace(t *testing.T) {
	gets := func(k int) linInput { return linInput{kind: linGets, key: k} }
	hit := func(v, u uint64) linOutput { return linOutput{found: true, val: v, unique: u} }
	race := []porcupine.Operation{op(0, 0, 9, gets(3), hit(671, 98)), op(1, 5, 7, gets(3), hit(676, 98))}
	if _, ok := casRewriteRace(race); !ok {
		t.Error("one unique with two values not recognised")
	}
	for name, h := range map[string][]porcupine.Operation{
		"same version twice":     {op(0, 0, 1, gets(3), hit(671, 98)), op(1, 2, 3, gets(3), hit(671, 98))},
		"one unique on two keys": {op(0, 0, 1, gets(1), hit(5, 98)), op(1, 2, 3, gets(2), hit(6, 98))},
		"get without unique":     {op(0, 0, 1, linInput{kind: linGet, key: 3}, hit(1, 0)), op(1, 2, 3, linInput{kind: linGet, key: 3}, hit(2, 0))},
		"different uniques":      {op(0, 0, 1, gets(3), hit(671, 97)), op(1, 2, 3, gets(3), hit(676, 98))},
	} {
		if why, ok := casRewriteRace(h); ok {
			t.Errorf("%s: taken for the race (%s)", name, why)
		}
	}
}
