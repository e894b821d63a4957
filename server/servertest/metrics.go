package servertest

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed scrape of a /metrics endpoint.
type Scrape map[string]*dto.MetricFamily

// ScrapeMetrics GETs url over HTTP and parses the Prometheus text format,
// failing the test unless that works.
func ScrapeMetrics(t testing.TB, url string) Scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: HTTP %d", url, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the scrape of %s: %v", url, err)
	}
	return fams
}

// Value is the value of name's series with exactly labels: a counter's or
// gauge's value, a histogram's sample count. ok is false without one.
func (s Scrape) Value(name string, labels map[string]string) (v float64, ok bool) {
	for _, m := range s[name].GetMetric() {
		if !sameLabels(m.GetLabel(), labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// LabelValues lists the values label takes in name's series.
func (s Scrape) LabelValues(name, label string) []string {
	var out []string
	for _, m := range s[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

// Check fails the test unless name's series with exactly labels is there
// with the value want.
func (s Scrape) Check(t testing.TB, name string, labels map[string]string, want float64) {
	t.Helper()
	if got, ok := s.Value(name, labels); !ok || got != want {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
	}
}
