// Package testbed builds the NAPI testbed: two network namespaces, a server
// host and a client host, joined by a veth pair whose four rx queues each run
// a NAPI instance. Accepted sockets then report nonzero SO_INCOMING_NAPI_ID,
// the netdev genetlink family lists the NAPIs, and busy polling works as on a
// multi-queue NIC. kernel/testbed.sh builds the same bed from a shell.
//
// Addresses live only inside the namespaces, so every bed uses the same
// ones; names are unique per run (gct-PID-RANDOM) so parallel or crashed
// runs never collide.
//
// The package is Linux-only; on other systems it is empty.
package testbed
