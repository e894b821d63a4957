package sqlstore

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpauth/mcpauth/server/store/sqlstore/pgtest"
	"github.com/mcpauth/mcpauth/server/store/storetest"
)

// A listener whose backend is terminated (an administrator, a failover)
// reports the loss at once and resyncs on a new connection; a change made
// meanwhile is not delivered, which is why the cache must distrust itself
// in between.
func TestInvalidationsAfterTerminatedConnection(t *testing.T) {
	dsn := pgtest.FreshDB(t)
	a, b := openPostgresTest(t, dsn), openPostgresTest(t, dsn)
	rec := storetest.Watch(t, b)
	pid := b.watch.pid.Load()
	start := time.Now()
	if _, err := a.db.ExecContext(t.Context(), "SELECT pg_terminate_backend($1)", int(pid)); err != nil {
		t.Fatal(err)
	}
	rec.Expect(t, "unsynced", 5*time.Second)
	t.Logf("terminated listener noticed after %v", time.Since(start))
	rec.Expect(t, "resynced", 5*time.Second)
	if b.watch.pid.Load() == pid {
		t.Fatal("resynced on the terminated backend")
	}
	must(t, a.RevokeToken(t.Context(), "after", time.UnixMilli(1e12)))
	rec.Expect(t, "revoked after 1000000000000", 5*time.Second)
}

// A connection that goes silent (a partition: no reset, nothing arrives)
// is noticed within the heartbeat bound, and the listener comes back once
// the network does.
func TestInvalidationsAfterSilentPartition(t *testing.T) {
	dsn := pgtest.FreshDB(t)
	b := openPostgresTest(t, dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := startBlackholeProxy(t, u.Host)
	b.watch.dialAddrOverride = p.addr()
	rec := storetest.Watch(t, b)

	p.frozen.Store(true)
	start := time.Now()
	rec.Expect(t, "unsynced", 5*time.Second)
	took := time.Since(start)
	t.Logf("silent partition noticed after %v (bound %v)", took, heartbeatIdle+heartbeatTimeout)
	if bound := heartbeatIdle + heartbeatTimeout + 500*time.Millisecond; took > bound {
		t.Fatalf("partition noticed after %v, beyond %v", took, bound)
	}
	p.frozen.Store(false)
	rec.Expect(t, "resynced", 10*time.Second)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// blackholeProxy forwards TCP to target on loopback; while frozen it drops
// every byte both ways but keeps the connections open, as a partition
// does.
type blackholeProxy struct {
	ln     net.Listener
	frozen atomic.Bool
}

func startBlackholeProxy(t *testing.T, target string) *blackholeProxy {
	t.Helper()
	p := &blackholeProxy{}
	p.ln = proxyTCP(t, target, p.pipe, p.pipe)
	return p
}

// proxyTCP forwards each connection to its listener (on loopback) to
// target, client to server through up and back through down, each of
// which closes both ends when done; all is closed at cleanup.
func proxyTCP(t *testing.T, target string, up, down func(dst io.WriteCloser, src io.ReadCloser)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { up(out, in) })
			wg.Go(func() { down(in, out) })
		}
	})
	return ln
}

func (p *blackholeProxy) addr() string { return p.ln.Addr().String() }

func (p *blackholeProxy) pipe(dst io.WriteCloser, src io.ReadCloser) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
