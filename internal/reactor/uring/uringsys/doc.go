// Package uringsys is the io_uring system-call layer under gocached's
// io_uring engine (package uring): io_uring_setup, io_uring_enter and
// io_uring_register, the mmapped submission and completion queues with
// their atomic heads and tails (Ring), and the provided-buffer ring
// (BufRing). It holds no policy: what to submit, and when to wait, is the
// engine's. It is its own package so that bench/cmd/uringfloor, the floor
// the engine is measured against, drives the kernel through the very same
// ring code.
//
// It is written on golang.org/x/sys/unix: none of the Go io_uring libraries
// (giouring, iouring-go, go-uring) was available from the module proxy this
// project uses, and those that exist predate NAPI registration.
package uringsys
