//go:build linux

package enginecmp

import "github.com/gocached/gocached/kernel/testbed"

type bedHandle = testbed.Bed
