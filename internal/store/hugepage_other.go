//go:build !linux

package store

func adviseHugePages([]byte) {}
