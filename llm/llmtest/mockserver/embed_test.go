package mockserver

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// newEmbedServer serves s with its embedding routes in front, as
// cmd/mockvendor and New do once server.go routes to ServeEmbedding.
func newEmbedServer(t testing.TB) *Server {
	t.Helper()
	s := NewUnstarted()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.ServeEmbedding(w, r) {
			s.Handler().ServeHTTP(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func embedPost(t *testing.T, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func TestEmbedVectors(t *testing.T) {
	v := Embed("Parse the HTTP request", 0)
	if len(v) != DefaultEmbedDim {
		t.Fatalf("len = %d; want %d", len(v), DefaultEmbedDim)
	}
	if diff := cmp.Diff(v, Embed("Parse the HTTP request", 0)); diff != "" {
		t.Fatalf("not deterministic:\n%s", diff)
	}
	for _, text := range []string{"", "  ", "x", "parseHTTPRequest_v2", "日本語のテキスト", strings.Repeat("word ", 1000)} {
		for _, dim := range []int{1, 8, 256, 1536} {
			if n := cosine(Embed(text, dim), Embed(text, dim)); math.Abs(n-1) > 1e-5 {
				t.Errorf("Embed(%q, %d): norm² %v; want 1", text, dim, n)
			}
		}
	}
	if len(Embed("x", 1536)) != 1536 {
		t.Error("dim not honoured")
	}
	// Similar texts are nearer than unrelated ones.
	tests := []struct{ a, near, far string }{
		{"parse the http request", "parseHTTPRequest", "render the dashboard colors"},
		{"open_session_store", "open the session store", "quick brown fox"},
		{"database connection pool", "connection pooling for the database", "chocolate cake recipe"},
		{"embeddings", "embedding", "kitchen"},
	}
	for _, tt := range tests {
		a := Embed(tt.a, 0)
		if near, far := cosine(a, Embed(tt.near, 0)), cosine(a, Embed(tt.far, 0)); near <= far {
			t.Errorf("%q: %q scores %.3f, not above %q at %.3f", tt.a, tt.near, near, tt.far, far)
		}
	}
}

func TestSplitIdentifier(t *testing.T) {
	tests := map[string][]string{
		"parseHTTPRequest_v2": {"parse", "HTTP", "Request", "v2"},
		"snake_case_name":     {"snake", "case", "name"},
		"HTMLParser":          {"HTML", "Parser"},
		"simple":              {"simple"},
		"_lead__trail_":       {"lead", "trail"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitIdentifier(in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
}

func TestEmbedOpenAI(t *testing.T) {
	s := newEmbedServer(t)
	for _, path := range []string{"/v1/embeddings", "/embeddings"} {
		code, _, body := embedPost(t, s.URL+path, `{"model":"text-embedding-3-small","input":["alpha beta","gamma"],"dimensions":32}`)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		var got struct {
			Object string `json:"object"`
			Data   []struct {
				Object    string    `json:"object"`
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
			Model string         `json:"model"`
			Usage map[string]int `json:"usage"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if got.Object != "list" || got.Model != "text-embedding-3-small" || len(got.Data) != 2 ||
			got.Data[1].Index != 1 || got.Data[0].Object != "embedding" || got.Usage["prompt_tokens"] != 5 {
			t.Fatalf("reply: %s", body)
		}
		if diff := cmp.Diff(Embed("gamma", 32), got.Data[1].Embedding); diff != "" {
			t.Error(diff)
		}
	}
	code, _, body := embedPost(t, s.URL+"/v1/embeddings", `{"model":"m","input":"alpha","encoding_format":"base64"}`)
	var b64 struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &b64); err != nil || code != 200 {
		t.Fatalf("%d %s %v", code, body, err)
	}
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].Embedding)
	if err != nil {
		t.Fatal(err)
	}
	want := Embed("alpha", 0)
	if len(raw) != 4*len(want) || math.Float32frombits(binary.LittleEndian.Uint32(raw[4:])) != want[1] {
		t.Errorf("base64 vector does not decode to Embed's")
	}
	if got := s.Requests(); len(got) != 3 || got[0].Vendor != OpenAIEmbeddings || !strings.Contains(string(got[2].Body), "base64") {
		t.Errorf("requests not logged: %+v", got)
	}
}

func TestEmbedValidation(t *testing.T) {
	s := newEmbedServer(t)
	tests := []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/embeddings", `{"input":"x"}`, 400, `"message":"you must provide a model parameter","type":"invalid_request_error"`},
		{"/v1/embeddings", `{"model":"m"}`, 400, `'input' is a required property`},
		{"/v1/embeddings", `{"model":"m","input":""}`, 400, `'$.input' is invalid`},
		{"/v1/embeddings", `{"model":"m","input":["a",""]}`, 400, `'$.input' is invalid`},
		{"/v1/embeddings", `{"model":"m","input":[]}`, 400, `'$.input' is invalid`},
		{"/v1/embeddings", `{"model":"m","input":"a","encoding_format":"int8"}`, 400, `not one of ['float', 'base64']`},
		{"/v1/embeddings", `{"model":"m","input":"a","dimensions":0}`, 400, `Invalid value for 'dimensions' = 0`},
		{"/v1/embeddings", `{"model":"m","input":` + manyInputs(MaxOpenAIInputs+1) + `}`, 400, `maximum length 2048, but got an array with length 2049`},
		{"/v1/embeddings", `not json`, 400, `could not parse the JSON body`},
		{"/v1/embeddings", `{"model":"m","input":[1,2,3]}`, 200, `"embedding":[`},
		{"/v1/embeddings", `{"model":"m","input":[[1,2],[3]]}`, 200, `"index":1`},
		{"/v1beta/models/e:batchEmbedContents", `{"requests":[]}`, 400, `"status":"INVALID_ARGUMENT"`},
		{"/v1beta/models/e:batchEmbedContents", `{"requests":[{"model":"models/other","content":{"parts":[{"text":"a"}]}}]}`, 400, `must be the model of the URL`},
		{"/v1beta/models/e:batchEmbedContents", `{"requests":[{"model":"models/e","content":{"parts":[{"text":"a"}]},"taskType":"NOPE"}]}`, 400, `task_type`},
		{"/v1beta/models/e:batchEmbedContents", `{"requests":[{"model":"models/e","content":{"parts":[]}}]}`, 400, `contents is not specified`},
		{"/v1beta/models/e:batchEmbedContents", `{"requests":` + manyGemini(MaxGeminiBatch+1) + `}`, 400, `at most 100 requests`},
		{"/v1beta/models/e:embedContent", `{"content":{"parts":[{"text":""}]}}`, 400, `text is empty`},
		{"/v1beta/models/e:embedContent", `{"content":{"parts":[{"text":"hi"}]},"outputDimensionality":4}`, 200, `{"embedding":{"values":[`},
		{"/api/embed", `{"input":"x"}`, 400, `{"error":"model is required"}`},
		{"/api/embed", `{"model":"m","input":5}`, 400, `{"error":"invalid input type"}`},
		{"/api/embed", `{"model":"m"}`, 200, `"embeddings":[]`},
		{"/api/embed", `{"model":"m","input":"hi","dimensions":3}`, 200, `"prompt_eval_count":1`},
	}
	for _, tt := range tests {
		code, _, body := embedPost(t, s.URL+tt.path, tt.body)
		if code != tt.status || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s %.60s: %d %s; want %d with %s", tt.path, tt.body, code, body, tt.status, tt.want)
		}
	}
}

func manyInputs(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`"a",`, n), ",") + "]"
}

func manyGemini(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`{"model":"models/e","content":{"parts":[{"text":"a"}]}},`, n), ",") + "]"
}

func TestEmbedGeminiAndOllama(t *testing.T) {
	s := newEmbedServer(t)
	code, _, body := embedPost(t, s.URL+"/v1beta/models/gemini-embedding-001:batchEmbedContents",
		`{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"one"}]},"taskType":"RETRIEVAL_DOCUMENT","outputDimensionality":16},
		{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"two"}]},"taskType":"RETRIEVAL_DOCUMENT","outputDimensionality":16}]}`)
	var gem struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal(body, &gem); err != nil || code != 200 || len(gem.Embeddings) != 2 {
		t.Fatalf("%d %s", code, body)
	}
	if diff := cmp.Diff(Embed("two", 16), gem.Embeddings[1].Values); diff != "" {
		t.Error(diff)
	}
	code, _, body = embedPost(t, s.URL+"/api/embed", `{"model":"nomic-embed-text","input":["one","two"]}`)
	var oll struct {
		Model      string      `json:"model"`
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := json.Unmarshal(body, &oll); err != nil || code != 200 || oll.Model != "nomic-embed-text" {
		t.Fatalf("%d %s", code, body)
	}
	if diff := cmp.Diff([][]float32{Embed("one", 0), Embed("two", 0)}, oll.Embeddings); diff != "" {
		t.Error(diff)
	}
}

func TestEmbedFaults(t *testing.T) {
	s := newEmbedServer(t)
	s.APIKey = "k"
	openai := `{"model":"m","input":["a","b","c"]}`
	auth := []string{"Authorization", "Bearer k"}
	if code, _, body := embedPost(t, s.URL+"/v1/embeddings", openai); code != 401 || !strings.Contains(string(body), "invalid_api_key") {
		t.Errorf("no key: %d %s", code, body)
	}
	if code, _, _ := embedPost(t, s.URL+"/api/embed", `{"model":"m","input":"a"}`); code != 200 {
		t.Errorf("ollama asks for no key: %d", code)
	}
	s.EnqueueEmbedFaults(
		EmbedFault{Fault: Fault{Status: 429, RetryAfter: "3"}},
		EmbedFault{WrongCount: true},
		EmbedFault{MixedDimensions: true},
		EmbedFault{Fault: Fault{Malformed: true}},
		EmbedFault{Fault: Fault{Status: 500, Message: "boom"}},
	)
	code, h, body := embedPost(t, s.URL+"/v1/embeddings", openai, auth...)
	if code != 429 || h.Get("Retry-After") != "3" || !strings.Contains(string(body), "rate_limit_exceeded") {
		t.Errorf("429: %d %v %s", code, h, body)
	}
	var reply struct {
		Data []struct {
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	_, _, body = embedPost(t, s.URL+"/v1/embeddings", openai, auth...)
	if err := json.Unmarshal(body, &reply); err != nil || len(reply.Data) != 2 {
		t.Errorf("wrong count: %s", body)
	}
	_, _, body = embedPost(t, s.URL+"/v1/embeddings", openai, auth...)
	if err := json.Unmarshal(body, &reply); err != nil || len(reply.Data[2].Embedding) != DefaultEmbedDim-1 {
		t.Errorf("mixed dimensions: %s", body)
	}
	if _, _, body = embedPost(t, s.URL+"/v1/embeddings", openai, auth...); json.Valid(body) {
		t.Errorf("malformed: a valid body %s", body)
	}
	code, _, body = embedPost(t, s.URL+"/v1beta/models/e:embedContent", `{"content":{"parts":[{"text":"a"}]}}`, "x-goog-api-key", "k")
	if code != 500 || !strings.Contains(string(body), `"status":"INTERNAL"`) || !strings.Contains(string(body), "boom") {
		t.Errorf("gemini 500: %d %s", code, body)
	}
	if code, _, _ := embedPost(t, s.URL+"/v1/embeddings", openai, auth...); code != 200 {
		t.Errorf("faults used up: %d", code)
	}
}

func TestEmbedRouteLeavesOthers(t *testing.T) {
	s := NewUnstarted()
	for _, p := range []string{"/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1beta/models/g:generateContent", "/api/embeddings"} {
		r := httptest.NewRequest(http.MethodPost, p, strings.NewReader("{}"))
		if s.ServeEmbedding(httptest.NewRecorder(), r) {
			t.Errorf("%s taken as an embedding request", p)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/embeddings", nil)
	if s.ServeEmbedding(httptest.NewRecorder(), r) {
		t.Error("GET taken as an embedding request")
	}
}

func FuzzDecodeEmbed(f *testing.F) {
	seeds := []struct {
		v    Vendor
		body string
	}{
		{OpenAIEmbeddings, `{"model":"m","input":["a","b"],"dimensions":8}`},
		{OpenAIEmbeddings, `{"model":"m","input":[[1,2],[3]],"encoding_format":"base64"}`},
		{OpenAIEmbeddings, `{"model":"m","input":"x"}`},
		{GeminiEmbeddings, `{"requests":[{"model":"models/e","content":{"parts":[{"text":"a"}]},"outputDimensionality":4}]}`},
		{GeminiEmbeddings, `{"content":{"parts":[{"text":"a"},{"text":"b"}]}}`},
		{Ollama, `{"model":"m","input":["a"]}`},
		{Ollama, `{"model":"m","input":"a","dimensions":2}`},
	}
	vendors := []Vendor{OpenAIEmbeddings, GeminiEmbeddings, Ollama}
	for _, s := range seeds {
		for i, v := range vendors {
			if v == s.v {
				f.Add(uint8(i), false, []byte(s.body))
				f.Add(uint8(i), true, []byte(s.body))
			}
		}
	}
	f.Fuzz(func(t *testing.T, vi uint8, single bool, body []byte) {
		v := vendors[int(vi)%len(vendors)]
		req, err := decodeEmbed(v, "e", single, body)
		if err != nil {
			if err.Status != 400 || err.Message == "" {
				t.Fatalf("error %+v", err)
			}
			return
		}
		if req.Dims < 0 || req.Dims > MaxEmbedDim {
			t.Fatalf("dims %d out of range", req.Dims)
		}
		if v != Ollama && len(req.Inputs) == 0 {
			t.Fatal("accepted a request with no input")
		}
		for _, in := range req.Inputs {
			if vec := Embed(in, min(req.Dims, 64)); len(vec) == 0 {
				t.Fatal("no vector")
			}
		}
		_ = renderEmbed(v, req, [][]float32{{1}})
	})
}

func BenchmarkEmbed(b *testing.B) {
	text := strings.Repeat("func (s *Server) ServeEmbedding(w http.ResponseWriter, r *http.Request) bool ", 12)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Embed(text, 1536)
	}
}
