package telemetry

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
)

// TestDroppedStreamItems: the adapters' drop counts reach the exposition at
// scrape time, each provider, kind and type its own series, and a later
// drop shows at the next scrape (issue 23; PROV-2).
func TestDroppedStreamItems(t *testing.T) {
	m := NewMetrics()
	scrape := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Body.String()
	}
	llm.RecordDrop("telemetry-test", llm.DropEvent, "brand_new_event")
	llm.RecordDrop("telemetry-test", llm.DropEvent, "brand_new_event")
	llm.RecordDrop("telemetry-test", llm.DropDelta, "citations_delta")
	body := scrape()
	for _, line := range []string{
		"# TYPE rein_llm_dropped_stream_items_total counter",
		`rein_llm_dropped_stream_items_total{kind="event",provider="telemetry-test",type="brand_new_event"} 2`,
		`rein_llm_dropped_stream_items_total{kind="delta",provider="telemetry-test",type="citations_delta"} 1`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("exposition lacks %q", line)
		}
	}
	llm.RecordDrop("telemetry-test", llm.DropEvent, "brand_new_event")
	if line := `rein_llm_dropped_stream_items_total{kind="event",provider="telemetry-test",type="brand_new_event"} 3`; !strings.Contains(scrape(), line+"\n") {
		t.Errorf("a later drop is not seen at the next scrape: want %q", line)
	}
}
