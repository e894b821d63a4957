package proxy

import (
	"io"
	"sync"
)

// hostInput reads the host's stdin ahead into memory, so that the proxy
// sees the host go away (EOF) while it is still logging in, before it
// reads a message; what was read reaches the proxy unchanged afterwards.
// Reading ahead pauses while limit bytes wait.
type hostInput struct {
	mu    sync.Mutex
	ready *sync.Cond
	buf   []byte
	err   error // after buf: io.EOF or the read error
	limit int
	// gone is closed when the host's stdin ended.
	gone chan struct{}
}

func watchHostInput(r io.Reader, limit int) *hostInput {
	h := &hostInput{limit: limit, gone: make(chan struct{})}
	h.ready = sync.NewCond(&h.mu)
	go h.readAhead(r)
	return h
}

func (h *hostInput) readAhead(r io.Reader) {
	chunk := make([]byte, 32*1024)
	for {
		h.mu.Lock()
		for len(h.buf) >= h.limit {
			h.ready.Wait()
		}
		h.mu.Unlock()
		n, err := r.Read(chunk)
		h.mu.Lock()
		h.buf = append(h.buf, chunk[:n]...)
		if err != nil {
			h.err = err
			close(h.gone)
		}
		h.ready.Broadcast()
		h.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (h *hostInput) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.buf) == 0 && h.err == nil {
		h.ready.Wait()
	}
	if len(h.buf) == 0 {
		return 0, h.err
	}
	n := copy(p, h.buf)
	h.buf = h.buf[n:]
	h.ready.Broadcast()
	return n, nil
}
