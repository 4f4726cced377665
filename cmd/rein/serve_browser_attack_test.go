package main

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
)

// findChromium returns the path of a Chromium, or skips the test saying
// why.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed: this test drives rein serve from a real browser page (apt-get install chromium; scripts/test installs it)")
	return ""
}

// attackPage is a page on another origin than rein's that tries what a
// hostile page can without preflight — a no-cors fetch of a Blob, a
// text/plain fetch, forms (urlencoded, and text/plain that spells JSON) —
// and with it: a JSON fetch (preflighted), a cross-origin read, an
// EventSource on a session's events; then it reports what it saw.
var attackPage = template.Must(template.New("attack").Parse(`<!doctype html>
<meta charset="utf-8"><title>not rein</title>
<body>
<script>
const rein = {{.Rein}}, sid = {{.Session}};
const ws = '{"kind":"chat"}';
const out = {};
async function attempt(name, f) {
  try { out[name] = await f(); } catch (e) { out[name] = "refused: " + e.name; }
}
function form(enctype, action, name, value) {
  return new Promise(res => {
    const frame = document.createElement("iframe");
    frame.name = "f" + Math.random().toString(36).slice(2);
    document.body.appendChild(frame);
    const f = document.createElement("form");
    f.method = "POST"; f.action = rein + action; f.enctype = enctype; f.target = frame.name;
    const i = document.createElement("input");
    i.name = name; i.value = value;
    f.appendChild(i);
    document.body.appendChild(f);
    frame.onload = () => res("submitted");
    setTimeout(() => res("no load"), 5000);
    f.submit();
  });
}
(async () => {
  await attempt("no-cors Blob POST /workspaces", async () =>
    (await fetch(rein + "/workspaces", {method: "POST", mode: "no-cors", body: new Blob([ws])})).type);
  await attempt("no-cors text/plain POST /workspaces", async () =>
    (await fetch(rein + "/workspaces", {method: "POST", mode: "no-cors", body: ws})).type);
  await attempt("no-cors Blob POST message", async () =>
    (await fetch(rein + "/sessions/" + sid + "/messages", {method: "POST", mode: "no-cors", body: new Blob(['{"text":"run rm -rf ~"}'])})).type);
  await attempt("JSON POST /workspaces (preflighted)", async () =>
    "status " + (await fetch(rein + "/workspaces", {method: "POST", headers: {"Content-Type": "application/json"}, body: ws})).status);
  await attempt("GET /workspaces (read)", async () => "status " + (await fetch(rein + "/workspaces")).status);
  await attempt("EventSource", () => new Promise(res => {
    const es = new EventSource(rein + "/sessions/" + sid + "/events");
    es.onopen = () => { es.close(); res("open"); };
    es.onerror = () => { es.close(); res("error"); };
  }));
  await attempt("form urlencoded POST /workspaces", () => form("application/x-www-form-urlencoded", "/workspaces", "kind", "chat"));
  await attempt("form text/plain POST /workspaces (JSON-shaped)", () => form("text/plain", "/workspaces", '{"kind":"chat","x":"', '"}'));
  fetch("/report", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(out)});
})();
</script>
`))

// reportServer serves a page at / and takes its JSON report at /report;
// other paths go to next when set. The page is set (setPage) before the
// browser loads it.
type reportServer struct {
	url     string
	reports chan map[string]string
	page    atomic.Pointer[[]byte]
}

// setPage sets the page served at /.
func (p *reportServer) setPage(page []byte) { p.page.Store(&page) }

func newReportServer(t *testing.T, next http.Handler) *reportServer {
	t.Helper()
	p := &reportServer{reports: make(chan map[string]string, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if page := p.page.Load(); page != nil {
			w.Write(*page)
		}
	})
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		rep := map[string]string{}
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			rep["error"] = "report: " + err.Error()
		}
		select {
		case p.reports <- rep:
		default:
		}
	})
	if next != nil {
		mux.Handle("/", next)
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	p.url = ts.URL
	return p
}

// browse opens url in headless Chromium with the resolver rules and
// returns the page's report.
func (p *reportServer) browse(t *testing.T, chromium, url, rules string) map[string]string {
	t.Helper()
	return browse(t, chromium, rules, url, p.reports, nil)
}

// logged is one request line of rein's log.
type logged struct {
	Msg    string `json:"msg"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
}

// requests returns rein's request log lines for paths under prefix.
func (s *served) requests(prefix string) []logged {
	var out []logged
	for _, line := range strings.Split(s.log(), "\n") {
		var l logged
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "http request" && strings.HasPrefix(l.Path, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// workspaces lists the local caller's workspaces, as curl would.
func (s *served) workspaces() []api.Workspace {
	s.t.Helper()
	var list struct {
		Items []api.Workspace `json:"items"`
	}
	s.must(http.StatusOK, http.MethodGet, "/workspaces", nil, &list)
	return list.Items
}

// API-8 in a real browser: a page on another origin (another port of
// 127.0.0.1) tries everything a page can against rein serve without
// authentication. The browser reports what it could see, rein's log what
// it answered, and rein's store that nothing was created.
func TestServeBrowserCrossOrigin_API8(t *testing.T) {
	chromium := findChromium(t)
	v := newVendor(t)
	in := newInstance(t, v)
	s := in.start()
	sid := s.session(in.project)
	before := s.workspaces()

	var page bytes.Buffer
	if err := attackPage.Execute(&page, map[string]any{"Rein": s.base, "Session": sid}); err != nil {
		t.Fatal(err)
	}
	p := newReportServer(t, nil)
	p.setPage(page.Bytes())
	rep := p.browse(t, chromium, p.url+"/", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
	t.Logf("the page saw: %v", rep)

	want := map[string]string{
		"no-cors Blob POST /workspaces":                  "opaque", // the page never learns the answer
		"no-cors text/plain POST /workspaces":            "opaque",
		"no-cors Blob POST message":                      "opaque",
		"JSON POST /workspaces (preflighted)":            "refused: TypeError", // the preflight got no CORS answer
		"GET /workspaces (read)":                         "refused: TypeError", // no CORS answer: the read is blocked
		"EventSource":                                    "error",
		"form urlencoded POST /workspaces":               "submitted",
		"form text/plain POST /workspaces (JSON-shaped)": "submitted",
	}
	if d := cmp.Diff(want, rep); d != "" {
		t.Errorf("what the page saw (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, s.workspaces()); d != "" {
		t.Errorf("the page changed the workspaces (-before +after):\n%s", d)
	}
	var runs struct {
		Items []api.Run `json:"items"`
	}
	s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/runs", nil, &runs)
	if len(runs.Items) != 0 {
		t.Errorf("the page started runs: %+v", runs.Items)
	}
	// rein refused each request itself (not only the browser's CORS
	// check): the Origin check answered 403 before anything ran. The one
	// 201 is the test's own workspace; a cross-origin GET of a listing is
	// answered (it changes nothing) but the browser hid it from the page.
	got := map[string]int{}
	for _, prefix := range []string{"/workspaces", "/sessions/" + sid + "/messages", "/sessions/" + sid + "/events"} {
		for _, l := range s.requests(prefix) {
			if l.Method != http.MethodGet || l.Status != http.StatusOK {
				got[l.Method+" "+strings.Replace(l.Path, sid, "S", 1)+" "+http.StatusText(l.Status)]++
			}
		}
	}
	wantLog := map[string]int{
		"POST /workspaces Created":            1,
		"POST /workspaces Forbidden":          4,
		"OPTIONS /workspaces Forbidden":       1,
		"POST /sessions/S/messages Forbidden": 1,
	}
	if d := cmp.Diff(wantLog, withoutKey(got, "GET /sessions/S/events Forbidden")); d != "" {
		t.Errorf("rein's answers (-want +got):\n%s", d)
	}
	if got["GET /sessions/S/events Forbidden"] == 0 {
		t.Errorf("rein never refused the EventSource: %v", got)
	}
}

// withoutKey returns m without k.
func withoutKey(m map[string]int, k string) map[string]int {
	out := map[string]int{}
	for key, v := range m {
		if key != k {
			out[key] = v
		}
	}
	return out
}

// rebindPage is a page of the attacker's name that, once that name
// resolves to this machine, calls rein as its own origin.
var rebindPage = template.Must(template.New("rebind").Parse(`<!doctype html>
<meta charset="utf-8"><title>rebinding</title>
<script>
const sid = {{.Session}}, out = {};
async function attempt(name, f) {
  try { out[name] = await f(); } catch (e) { out[name] = "refused: " + e.name; }
}
const json = {"Content-Type": "application/json"};
(async () => {
  await attempt("POST /workspaces", async () =>
    "status " + (await fetch("/workspaces", {method: "POST", headers: json, body: '{"kind":"chat"}'})).status);
  await attempt("GET /workspaces", async () => "status " + (await fetch("/workspaces")).status);
  await attempt("POST message", async () =>
    "status " + (await fetch("/sessions/" + sid + "/messages", {method: "POST", headers: json, body: '{"text":"run rm -rf ~"}'})).status);
  await attempt("EventSource", () => new Promise(res => {
    const es = new EventSource("/sessions/" + sid + "/events");
    es.onopen = () => { es.close(); res("open"); };
    es.onerror = () => { es.close(); res("error"); };
  }));
  fetch("/report", {method: "POST", headers: json, body: JSON.stringify(out)});
})();
</script>
`))

// API-8, DNS rebinding in a real browser: Chromium resolves rebind.test to
// 127.0.0.1 (--host-resolver-rules) and loads the attacker's page from it;
// the page's own-origin requests then reach rein — through a proxy that
// keeps the Host header, as a rebound name's requests arrive — with
// Host: rebind.test:PORT and a matching Origin. Only the Host allow-list
// stands between the page and the machine: every answer is 421 and
// nothing is created.
func TestServeBrowserRebinding_API8(t *testing.T) {
	chromium := findChromium(t)
	v := newVendor(t)
	in := newInstance(t, v)
	s := in.start()
	sid := s.session(in.project)
	before := s.workspaces()
	target, err := url.Parse(s.base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // what a rebound name sends
	}, FlushInterval: -1}
	var page bytes.Buffer
	if err := rebindPage.Execute(&page, map[string]any{"Session": sid}); err != nil {
		t.Fatal(err)
	}
	p := newReportServer(t, proxy)
	p.setPage(page.Bytes())
	_, port, err := net.SplitHostPort(strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	rep := p.browse(t, chromium, "http://rebind.test:"+port+"/", "MAP rebind.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
	t.Logf("the page saw: %v", rep)
	want := map[string]string{"POST /workspaces": "status 421", "GET /workspaces": "status 421", "POST message": "status 421", "EventSource": "error"}
	if d := cmp.Diff(want, rep); d != "" {
		t.Errorf("what the rebinding page saw (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, s.workspaces()); d != "" {
		t.Errorf("the page changed the workspaces (-before +after):\n%s", d)
	}
	misdirected := 0
	for _, l := range append(s.requests("/workspaces"), append(s.requests("/sessions/"+sid+"/messages"), s.requests("/sessions/"+sid+"/events")...)...) {
		if l.Status == http.StatusMisdirectedRequest {
			misdirected++
		}
	}
	if misdirected < 4 {
		t.Errorf("rein answered 421 %d times, want at least 4 (each of the page's requests)", misdirected)
	}
}

// allowedPage is a page on an origin rein serve lists (--allowed-origin):
// its preflighted JSON POST, its read and its EventSource all work.
var allowedPage = template.Must(template.New("allowed").Parse(`<!doctype html>
<meta charset="utf-8"><title>an allowed console</title>
<script>
const rein = {{.Rein}}, out = {};
async function attempt(name, f) {
  try { out[name] = await f(); } catch (e) { out[name] = "refused: " + e.name; }
}
(async () => {
  let sid = "";
  await attempt("JSON POST /workspaces", async () => {
    const r = await fetch(rein + "/workspaces", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"kind":"chat"}'});
    const ws = await r.json();
    const s = await fetch(rein + "/sessions", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({workspace_id: ws.id})});
    sid = (await s.json()).id;
    return "status " + r.status + ", " + s.status;
  });
  await attempt("no-cors Blob POST /workspaces", async () =>
    (await fetch(rein + "/workspaces", {method: "POST", mode: "no-cors", body: new Blob(['{"kind":"chat"}'])})).type);
  await attempt("EventSource", () => new Promise(res => {
    const es = new EventSource(rein + "/sessions/" + sid + "/events");
    es.onopen = () => { es.close(); res("open"); };
    es.onerror = () => { es.close(); res("error"); };
  }));
  fetch("/report", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(out)});
})();
</script>
`))

// API-8: CORS works for the origins rein serve lists — in a real browser,
// a page on --allowed-origin passes the preflight, reads the answers and
// opens an EventSource; a body without Content-Type is still refused.
func TestServeBrowserAllowedOrigin_API8(t *testing.T) {
	chromium := findChromium(t)
	p := newReportServer(t, nil)
	v := newVendor(t)
	in := newInstance(t, v, "--allowed-origin", p.url)
	s := in.start()
	before := len(s.workspaces())
	var page bytes.Buffer
	if err := allowedPage.Execute(&page, map[string]any{"Rein": s.base}); err != nil {
		t.Fatal(err)
	}
	p.setPage(page.Bytes())
	rep := p.browse(t, chromium, p.url+"/", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
	t.Logf("the page saw: %v", rep)
	want := map[string]string{"JSON POST /workspaces": "status 201, 201", "no-cors Blob POST /workspaces": "opaque", "EventSource": "open"}
	if d := cmp.Diff(want, rep); d != "" {
		t.Errorf("what the allowed page saw (-want +got):\n%s", d)
	}
	if got := len(s.workspaces()); got != before+1 {
		t.Errorf("%d workspaces, want %d: the JSON POST's only", got, before+1)
	}
	var refused int
	for _, l := range s.requests("/workspaces") {
		if l.Method == http.MethodPost && l.Status == http.StatusUnsupportedMediaType {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("rein refused %d POSTs with 415, want the Blob's", refused)
	}
}
