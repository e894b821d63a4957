package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// LogHandler is slog's text or JSON handler plus a hand-written encoder for
// the one line every request writes. Through slog that line was the largest
// cost of a ping after the network (a Record, five attributes, generic
// quoting checks); here it is appended to a pooled buffer. The output is
// byte for byte what the slog handler writes (TestRequestLineAsSlogWritesIt);
// a line the fast encoder cannot write plainly (a path needing quotes or
// escapes) goes through slog.
type LogHandler struct {
	slog.Handler
	w    io.Writer
	json bool
	bufs sync.Pool
}

// NewLogHandler logs to w in format "text" or "json" at level and above.
func NewLogHandler(w io.Writer, format string, level slog.Leveler) (*LogHandler, error) {
	ho := &slog.HandlerOptions{Level: level}
	h := &LogHandler{w: w}
	switch format {
	case "text":
		h.Handler = slog.NewTextHandler(w, ho)
	case "json":
		h.Handler, h.json = slog.NewJSONHandler(w, ho), true
	default:
		return nil, fmt.Errorf("log format must be text or json, not %q", format)
	}
	h.bufs.New = func() any { b := make([]byte, 0, 256); return &b }
	return h, nil
}

// logRequest writes the request line: time, level INFO, msg "request",
// then request_id, method, path, status and duration. It reports false,
// writing nothing, when the line must go through slog instead.
func (h *LogHandler) logRequest(ctx context.Context, t time.Time, id, method, path string, status int, d time.Duration) bool {
	if !plainLogValue(id) || !plainLogValue(method) || !plainLogValue(path) {
		return false
	}
	if !h.Enabled(ctx, slog.LevelInfo) {
		return true // not wanted: nothing to write
	}
	bp := h.bufs.Get().(*[]byte)
	b := (*bp)[:0]
	t = t.Round(0) // as slog: no monotonic reading
	if h.json {
		b = append(b, `{"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request","request_id":"`...)
		b = append(b, id...)
		b = append(b, `","method":"`...)
		b = append(b, method...)
		b = append(b, `","path":"`...)
		b = append(b, path...)
		b = append(b, `","status":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(d), 10)
		b = append(b, "}\n"...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, t)
		b = append(b, " level=INFO msg=request request_id="...)
		b = append(b, id...)
		b = append(b, " method="...)
		b = append(b, method...)
		b = append(b, " path="...)
		b = append(b, path...)
		b = append(b, " status="...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, " duration="...)
		b = append(b, d.String()...) // never needs quotes: digits, '.', unit letters (µ is printable)
		b = append(b, '\n')
	}
	_, _ = h.w.Write(b) // as slog's handlers, one Write per line; a failed log write is not the request's error
	*bp = b
	h.bufs.Put(bp)
	return true
}

// plainLogValue: s is written as is by both slog handlers, unquoted in
// text and unescaped in JSON. Deliberately narrower than slog's own rules.
func plainLogValue(s string) bool {
	if s == "" {
		return false // slog quotes an empty text value
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '/' || c == '-' || c == '.' || c == '_' || c == '~':
		default:
			return false
		}
	}
	return true
}

// appendRFC3339Millis is slog's text time format: RFC 3339 with exactly
// three fractional digits, truncated (the same steps as log/slog).
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the fourth digit
}
