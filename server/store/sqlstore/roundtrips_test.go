package sqlstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store"
	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// The two hot paths cost PostgreSQL at most one statement each, counted on
// the wire: a code exchange its conditional UPDATE (RETURNING the record);
// a device poll answered authorization_pending none once this instance has
// read the pending code while its listener hears every change (the first
// poll reads the row and writes its pacing for the other instances), a
// slow_down its pacing write, and a poll while not listening a read (and
// the first one the pacing write).
func TestPostgresStatementsPerRequest(t *testing.T) {
	u, err := url.Parse(pgtest.FreshDB(t))
	if err != nil {
		t.Fatal(err)
	}
	wire := startStatementCounter(t, u.Host)
	u.Host = wire.addr()
	s := openPostgresTest(t, u.String())
	storetest.Watch(t, s)
	unsynced := openPostgresTest(t, u.String()) // no listener
	ctx := t.Context()
	const n = 5
	var codes, devices []string
	for i := range n + 1 {
		codes, devices = append(codes, fmt.Sprint("code-", i)), append(devices, fmt.Sprint("dc-", i))
		if err := s.CreateAuthCode(ctx, groupCode(codes[i])); err != nil {
			t.Fatal(err)
		}
	}
	createPending(t, s, pacingNow, devices...)
	consume := func(hash string) {
		if _, err := s.ConsumeAuthCode(ctx, hash, store.Redemption{ClientID: "c", Now: groupNow, TokenID: "jti", TokenExp: groupNow.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	pollWith := func(s *Store, hash string, slowDown bool) {
		if _, err := s.UpdateDeviceCode(ctx, hash, func(d store.DeviceCode) (store.DeviceCode, error) {
			d.LastPollAt = d.LastPollAt.Add(time.Second)
			if slowDown { // an interval after the first poll's pacing write
				d.LastPollAt, d.Interval = d.LastPollAt.Add(d.Interval), d.Interval+5*time.Second
			}
			return d, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	poll := func(s *Store, hash string) { pollWith(s, hash, false) }
	// Warm: the statements are prepared on the connection.
	consume(codes[n])
	poll(s, devices[n])
	poll(unsynced, devices[n])

	statements := func(what string, f func(), want int64) {
		t.Helper()
		before := wire.statements.Load()
		f()
		if got := wire.statements.Load() - before; got != want {
			t.Errorf("%s: %d statements, want %d", what, got, want)
		}
	}
	for i := range n {
		statements("code exchange", func() { consume(codes[i]) }, 1)
		statements("first poll of a device code (read, pacing written)", func() { poll(s, devices[i]) }, 2)
		statements("next poll of it", func() { poll(s, devices[i]) }, 0)
		statements("a slow_down (pacing written)", func() { pollWith(s, devices[i], true) }, 1)
		statements("poll without a listener", func() { poll(unsynced, devices[i]) }, 2)
		statements("next poll without a listener", func() { poll(unsynced, devices[i]) }, 1)
	}
}

// statementCounter forwards TCP to target on loopback and counts the
// statements clients run through it: the extended protocol's Execute
// messages and the simple protocol's Query messages, except pgx's
// "-- ping" (a pooled connection checked after a second unused).
type statementCounter struct {
	ln         net.Listener
	statements atomic.Int64
}

func startStatementCounter(t *testing.T, target string) *statementCounter {
	t.Helper()
	c := &statementCounter{}
	c.ln = proxyTCP(t, target, c.frontend, func(dst io.WriteCloser, src io.ReadCloser) {
		defer dst.Close()
		defer src.Close()
		_, _ = io.Copy(dst, src)
	})
	return c
}

func (c *statementCounter) addr() string { return c.ln.Addr().String() }

// frontend copies a client's messages to the server one by one, counting
// statements. The first message (startup) has no type byte.
func (c *statementCounter) frontend(dst io.WriteCloser, src io.ReadCloser) {
	defer dst.Close()
	defer src.Close()
	r := bufio.NewReader(src)
	first := true
	for {
		var head []byte
		if first {
			head = make([]byte, 4)
		} else {
			head = make([]byte, 5)
		}
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[len(head)-4:])) - 4
		if n < 0 || n > 1<<24 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if !first {
			switch head[0] {
			case 'E':
				c.statements.Add(1)
			case 'Q':
				if string(body) != "-- ping\x00" {
					c.statements.Add(1)
				}
			}
		}
		first = false
		if _, err := dst.Write(append(head, body...)); err != nil {
			return
		}
	}
}
