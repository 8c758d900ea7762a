package extstore

// WaitWrites blocks until every write buffer handed to the writer has been
// written (or has failed). Writes never wait for the disk (a full queue is
// ErrBusy), so a caller that must know the flash caught up — a test
// deciding that memory pressure found nothing more to move — waits here.
func (e *Engine) WaitWrites() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.queued > 0 {
		e.flushed.Wait()
	}
}
