package extstore

// counters are the engine's running totals, kept under Engine.mu.
type counters struct {
	pageAllocs     uint64
	pageEvictions  uint64
	pageReclaims   uint64
	objectsEvicted uint64
	objectsRead    uint64
	objectsWritten uint64
	objectsUsed    uint64
	bytesEvicted   uint64
	bytesWritten   uint64
	bytesRead      uint64
	bytesUsed      uint64

	readStale    uint64
	readBadCRC   uint64
	readShort    uint64
	readIOErrors uint64
	writeErrors  uint64
}
