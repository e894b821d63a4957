// Package promtext keeps counters and histograms and writes them in the
// Prometheus text exposition format (version 0.0.4).
//
// It exists instead of the Prometheus client library because that library,
// with protobuf and procfs, costs about 1 ms of package initialisation in
// every process that links it, and mcpauth is one binary: every CLI command
// paid it for metrics only `serve --metrics-addr` exposes. What the server
// needs is small (counters and fixed-bucket histograms with at most two
// labels); the tests hold the output to Prometheus's own parser.
package promtext

import (
	"bytes"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families and writes them out. The zero value is
// ready to use.
type Registry struct {
	mu       sync.Mutex
	families []family
	// extra writes families computed at scrape time (runtime, process).
	extra []func(*bytes.Buffer)
}

type family interface {
	name() string
	write(*bytes.Buffer)
}

func (r *Registry) add(f family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.families {
		if g.name() == f.name() {
			panic("promtext: metric " + f.name() + " registered twice")
		}
	}
	r.families = append(r.families, f)
}

// labels is a series' label values, in the order of its family's names.
// Two are enough for every metric here, and a fixed-size key keeps a
// lookup free of allocations.
type labels [2]string

type vec[T any] struct {
	fam   string
	help  string
	names []string
	// order lists label positions by name: Prometheus writes a series'
	// labels, and orders series, by label name.
	order  []int
	newT   func() *T
	mu     sync.RWMutex
	series map[labels]*T
}

func (v *vec[T]) name() string { return v.fam }

// with returns the series for values, creating it on first use.
func (v *vec[T]) with(values ...string) *T {
	if len(values) != len(v.names) {
		panic("promtext: " + v.fam + " takes " + strconv.Itoa(len(v.names)) + " label values")
	}
	var k labels
	copy(k[:], values)
	v.mu.RLock()
	s, ok := v.series[k]
	v.mu.RUnlock()
	if ok {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.series[k]; ok {
		return s
	}
	s = v.newT()
	v.series[k] = s
	return s
}

// sorted returns the series ordered by label values, as Prometheus's own
// client writes them, so a scrape reads the same from one time to the next.
func (v *vec[T]) sorted() ([]labels, []*T) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	keys := make([]labels, 0, len(v.series))
	for k := range v.series {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b labels) int {
		for _, i := range v.order {
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	vals := make([]*T, len(keys))
	for i, k := range keys {
		vals[i] = v.series[k]
	}
	return keys, vals
}

func newVec[T any](fam, help string, names []string, newT func() *T) *vec[T] {
	if len(names) > len(labels{}) {
		panic("promtext: " + fam + " has more than two labels")
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	return &vec[T]{fam: fam, help: help, names: names, order: order, newT: newT, series: map[labels]*T{}}
}

// Counter counts events. Every counter here counts whole events, so it is
// an integer and Inc is one atomic add.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Value is the count so far.
func (c *Counter) Value() uint64 { return c.n.Load() }

// CounterVec is a counter family split by labels.
type CounterVec struct{ v *vec[Counter] }

// NewCounterVec registers a counter family with the given label names.
func (r *Registry) NewCounterVec(name, help string, labelNames ...string) *CounterVec {
	cv := &CounterVec{v: newVec(name, help, labelNames, func() *Counter { return new(Counter) })}
	r.add(cv)
	return cv
}

// NewCounter registers a counter without labels.
func (r *Registry) NewCounter(name, help string) *Counter {
	return r.NewCounterVec(name, help).With()
}

// With returns the counter for these label values.
func (cv *CounterVec) With(values ...string) *Counter { return cv.v.with(values...) }

func (cv *CounterVec) name() string { return cv.v.fam }

func (cv *CounterVec) write(b *bytes.Buffer) {
	writeHeader(b, cv.v.fam, cv.v.help, "counter")
	keys, vals := cv.v.sorted()
	for i, k := range keys {
		writeSeries(b, cv.v.fam, cv.v.names, cv.v.order, k, "", "", float64(vals[i].Value()))
	}
}

// Histogram counts observations into fixed buckets, as a Prometheus
// histogram: cumulative bucket counts, a sum and a count.
type Histogram struct {
	bounds []float64
	counts []atomic.Uint64 // counts[i]: observations ≤ bounds[i] and > bounds[i-1]; the last is +Inf
	sum    atomic.Uint64   // float64 bits
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe records one value.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // first bound ≥ v: the bucket "le" includes its bound
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// HistogramVec is a histogram family split by labels.
type HistogramVec struct{ v *vec[Histogram] }

// NewHistogramVec registers a histogram family with the given upper bounds
// (ascending; +Inf is added) and label names.
func (r *Registry) NewHistogramVec(name, help string, bounds []float64, labelNames ...string) *HistogramVec {
	if !slices.IsSorted(bounds) {
		panic("promtext: " + name + "'s buckets are not ascending")
	}
	bounds = slices.Clone(bounds)
	hv := &HistogramVec{v: newVec(name, help, labelNames, func() *Histogram { return newHistogram(bounds) })}
	r.add(hv)
	return hv
}

// With returns the histogram for these label values.
func (hv *HistogramVec) With(values ...string) *Histogram { return hv.v.with(values...) }

func (hv *HistogramVec) name() string { return hv.v.fam }

func (hv *HistogramVec) write(b *bytes.Buffer) {
	f := hv.v.fam
	writeHeader(b, f, hv.v.help, "histogram")
	keys, vals := hv.v.sorted()
	for i, k := range keys {
		h := vals[i]
		// Read the buckets once; the count is their total, so a scrape
		// racing an observation stays consistent with itself.
		var cum uint64
		for j := range h.counts {
			cum += h.counts[j].Load()
			le := "+Inf"
			if j < len(h.bounds) {
				le = formatFloat(h.bounds[j])
			}
			writeSeries(b, f+"_bucket", hv.v.names, hv.v.order, k, "le", le, float64(cum))
		}
		writeSeries(b, f+"_sum", hv.v.names, hv.v.order, k, "", "", math.Float64frombits(h.sum.Load()))
		writeSeries(b, f+"_count", hv.v.names, hv.v.order, k, "", "", float64(cum))
	}
}

// Gauges adds families computed when scraped (the Go runtime's, the
// process's): write appends their text.
func (r *Registry) Gauges(write func(*bytes.Buffer)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.extra = append(r.extra, write)
}

// Text is the whole exposition: the registered families in name order,
// then the scrape-time ones.
func (r *Registry) Text() []byte {
	r.mu.Lock()
	fams := slices.Clone(r.families)
	extra := slices.Clone(r.extra)
	r.mu.Unlock()
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name(), b.name()) })
	var b bytes.Buffer
	for _, f := range fams {
		f.write(&b)
	}
	for _, w := range extra {
		w(&b)
	}
	return b.Bytes()
}

// ContentType is the text format's media type, as Prometheus expects it.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves the exposition.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body := r.Text()
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if req.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}

// WriteGauge appends one family of one unlabelled gauge (or counter, by
// typ) to b, for Gauges' writers.
func WriteGauge(b *bytes.Buffer, name, help, typ string, v float64) {
	writeHeader(b, name, help, typ)
	writeSeries(b, name, nil, nil, labels{}, "", "", v)
}

func writeHeader(b *bytes.Buffer, name, help, typ string) {
	b.WriteString("# HELP ")
	b.WriteString(name)
	b.WriteByte(' ')
	// In HELP, only backslash and newline are escaped.
	b.WriteString(strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help))
	b.WriteString("\n# TYPE ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(typ)
	b.WriteByte('\n')
}

// writeSeries writes `name{l1="v1",…,extra="extraValue"} value`, the
// labels in the given order and extra ("le") last, as Prometheus does.
func writeSeries(b *bytes.Buffer, name string, names []string, order []int, values labels, extra, extraValue string, v float64) {
	b.WriteString(name)
	if len(names) > 0 || extra != "" {
		b.WriteByte('{')
		sep := ""
		for _, i := range order {
			b.WriteString(sep)
			writeLabel(b, names[i], values[i])
			sep = ","
		}
		if extra != "" {
			b.WriteString(sep)
			writeLabel(b, extra, extraValue)
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

// writeLabel writes name="value", the value escaped as the format wants:
// backslash, double quote and newline.
func writeLabel(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(`="`)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
