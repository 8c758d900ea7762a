//go:build linux

// Command epollfloor is the floor of enginecmp's comparison: a server that
// does the least user-space work a memcached text-protocol server can do
// (package bench/floor) and still makes the system calls every epoll server
// makes per request (epoll_wait per batch, one read and one write per
// connection turn). It answers every "get KEY" with a hit of a fixed
// 100-byte value and every "set" with STORED, keeping nothing. Its CPU per
// request on the same load is what the kernel charges any epoll server for
// that load; what gocached or memcached cost on top of it is the most
// user-space work could save. bench/cmd/uringfloor is its io_uring twin.
//
//	epollfloor -l 127.0.0.1 -p 11211
//
// It takes (and ignores) memcached's -U, -m, -c and -t so enginecmp can start
// it like the other targets. Not a cache: never use it for anything else.
package main

import "github.com/gocached/gocached/bench/floor"

func main() { floor.Main("epollfloor", serve, nil) }
