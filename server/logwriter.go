package server

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// LogWriter batches log output: lines are buffered and written at most
// every interval (or when the buffer fills), so the request log line every
// request writes costs a copy instead of a write(2) of its own. A line is
// at most interval late; Flush and Close write out what is buffered (a
// crash may lose the last interval's lines, never more).
type LogWriter struct {
	mu     sync.Mutex
	buf    *bufio.Writer
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// NewLogWriter buffers w, flushing every interval (≤ 0: 100 ms).
func NewLogWriter(w io.Writer, interval time.Duration) *LogWriter {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	l := &LogWriter{buf: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushEvery(interval)
	return l
}

func (l *LogWriter) flushEvery(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = l.Flush()
		}
	}
}

// Write buffers p; a line longer than the buffer is written through.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	if err == nil && l.closed {
		err = l.buf.Flush()
	}
	return n, err
}

// Flush writes out what is buffered.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Flush()
}

// Close stops the timer and flushes; later writes go straight through.
func (l *LogWriter) Close() error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
		<-l.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.buf.Flush()
}
