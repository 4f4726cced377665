package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reinhq/rein/llm"
)

// dropsDesc describes rein_llm_dropped_stream_items_total.
var dropsDesc = prometheus.NewDesc("rein_llm_dropped_stream_items_total",
	"Stream items a model adapter dropped or could not keep, by provider, kind "+
		"(event, delta, block, oversize, replay) and the vendor's type: a vendor change shows here.",
	[]string{"provider", "kind", "type"}, nil)

// dropsCollector exports llm's drop counts ([llm.Drops]) when scraped: the
// adapters count with an atomic add and nothing here runs on their path.
// The llm package bounds the label values (type names are checked and at
// most 256 series exist).
type dropsCollector struct{}

// Describe sends the one family.
func (dropsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- dropsDesc }

// Collect reads the counts.
func (dropsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, d := range llm.Drops() {
		ch <- prometheus.MustNewConstMetric(dropsDesc, prometheus.CounterValue, float64(d.N), d.Provider, d.Kind, d.Type)
	}
}
