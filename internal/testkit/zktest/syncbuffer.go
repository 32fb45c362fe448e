package zktest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a process's output that a test may read while the
// process still writes it: os/exec copies into it from a goroutine of
// its own.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
