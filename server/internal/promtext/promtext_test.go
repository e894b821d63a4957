package promtext

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func parse(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses the exposition: %v\n%s", err, text)
	}
	return fams
}

// The same events recorded here and in Prometheus's own client library
// give the same exposition, byte for byte: names, HELP escaping, label
// escaping and order, bucket bounds, sums. Label values take every
// character the format escapes.
func TestTextIsWhatPrometheusClientWrites(t *testing.T) {
	ours := &Registry{}
	theirs := prometheus.NewRegistry()
	help := `Requests, by "route" \ code;` + "\nsecond line."
	bounds := []float64{.0005, .001, .0025, 1, 2.5}

	oc := ours.NewCounterVec("t_requests_total", help, "route", "code")
	tc := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t_requests_total", Help: help}, []string{"route", "code"})
	oh := ours.NewHistogramVec("t_duration_seconds", "Latency.", bounds, "route")
	th := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "t_duration_seconds", Help: "Latency.", Buckets: bounds}, []string{"route"})
	o1 := ours.NewCounter("t_reuse_total", "Reuse.")
	t1 := prometheus.NewCounter(prometheus.CounterOpts{Name: "t_reuse_total", Help: "Reuse."})
	theirs.MustRegister(tc, th, t1)

	routes := []string{"GET /api/ping", `quote " back \ nl` + "\n" + "end", "POST /oauth/token", "é ünïcode", ""}
	for i, r := range routes {
		code := fmt.Sprint(200 + i%3*100)
		for range i + 1 {
			oc.With(r, code).Inc()
			tc.WithLabelValues(r, code).Inc()
		}
		// On a bound, between bounds, above the last, and zero.
		for _, v := range []float64{0, .0005, .0007, float64(i) * 0.9, 3, 1e-9} {
			oh.With(r).Observe(v)
			th.WithLabelValues(r).Observe(v)
		}
	}
	o1.Inc()
	t1.Inc()

	mfs, err := theirs.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
			t.Fatal(err)
		}
	}
	got := ours.Text()
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("exposition differs from Prometheus's client\n got:\n%s\nwant:\n%s", got, want.Bytes())
	}
	parse(t, got)
}

// Counts are exact under concurrent use, and a scrape taken meanwhile is
// always well-formed with each histogram's count equal to its +Inf bucket.
func TestConcurrentUseIsExact(t *testing.T) {
	reg := &Registry{}
	c := reg.NewCounterVec("c_total", "C.", "k")
	h := reg.NewHistogramVec("h_seconds", "H.", []float64{0.5, 1}, "k")
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	scraped := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				scraped <- nil
				return
			default:
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(bytes.NewReader(reg.Text()))
			if err != nil {
				scraped <- err
				return
			}
			for _, m := range fams["h_seconds"].GetMetric() {
				hist := m.GetHistogram()
				if b := hist.GetBucket(); len(b) > 0 && b[len(b)-1].GetCumulativeCount() > hist.GetSampleCount() {
					scraped <- fmt.Errorf("bucket above count: %v", hist)
					return
				}
			}
		}
	}()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := fmt.Sprint(w % 3)
			for i := range each {
				c.With(k).Inc()
				h.With(k).Observe(float64(i%3) * 0.5)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-scraped; err != nil {
		t.Fatal(err)
	}
	var total, count uint64
	var sum float64
	for k := range 3 {
		total += c.With(fmt.Sprint(k)).Value()
	}
	for _, m := range parse(t, reg.Text())["h_seconds"].GetMetric() {
		count += m.GetHistogram().GetSampleCount()
		sum += m.GetHistogram().GetSampleSum()
	}
	if total != workers*each || count != workers*each {
		t.Errorf("counted %d and observed %d, want %d each", total, count, workers*each)
	}
	// Each worker observes 0, 0.5 and 1 in turn: 2000 = 666×(0+0.5+1) + 0 + 0.5.
	if want := float64(workers) * (666*1.5 + 0.5); sum != want {
		t.Errorf("sum %v, want %v", sum, want)
	}
}

// The runtime and process families are there, under the Prometheus
// client's names, with values that describe this process.
func TestRuntimeAndProcessGauges(t *testing.T) {
	reg := &Registry{}
	reg.Gauges(RuntimeGauges)
	reg.Gauges(ProcessGauges)
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != ContentType {
		t.Errorf("Content-Type %q, want %q", ct, ContentType)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	fams := parse(t, body)
	value := func(name string) float64 {
		t.Helper()
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) != 1 {
			t.Fatalf("%s missing from\n%s", name, body)
		}
		m := f.GetMetric()[0]
		if m.Gauge != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	if g := value("go_goroutines"); g < 2 {
		t.Errorf("go_goroutines %v: this test alone runs more", g)
	}
	if v := value("go_sched_gomaxprocs_threads"); v != float64(runtime.GOMAXPROCS(0)) {
		t.Errorf("go_sched_gomaxprocs_threads %v", v)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if rss := value("process_resident_memory_bytes"); rss < 1<<20 || rss > value("process_virtual_memory_bytes") {
		t.Errorf("process_resident_memory_bytes %v", rss)
	}
	if fds := value("process_open_fds"); fds < 4 || fds > value("process_max_fds") {
		t.Errorf("process_open_fds %v: stdin, stdout, stderr and the server's listener at least", fds)
	}
	// The test's process started before the test and within the hour.
	start := time.Unix(int64(value("process_start_time_seconds")), 0)
	if now := time.Now(); start.After(now.Add(time.Second)) || start.Before(now.Add(-time.Hour)) {
		t.Errorf("process_start_time_seconds %v, now %v", start, now)
	}
}
