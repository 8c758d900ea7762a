package napi

import "testing"

func TestTryEinval(t *testing.T) {
	c, err := Dial()
	if err != nil { t.Fatal(err) }
	defer c.Close()
	ns, _ := c.NAPIs(2)
	t.Log(c.Set(ns[0].ID, Knobs{DeferHardIRQs: Uint32(1<<31)}))
	t.Log(c.Set(ns[0].ID, Knobs{DeferHardIRQs: Uint32(1<<31), IRQSuspendTimeout: Uint64(5)}))
}
