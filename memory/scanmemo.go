package memory

import "sync"

// The prompt's memory section is rebuilt at every run start, and every
// entry shown is scanned first; entries rarely change between runs, so
// the findings of texts already scanned are remembered, up to
// scanMemoBytes of text (then forgotten all at once). Findings are never
// modified after Scan returns them, so sharing them is safe.
var scanMemo struct {
	sync.Mutex
	m     map[string][]Finding
	bytes int
}

// scanMemoBytes bounds the text the memo keeps.
const scanMemoBytes = 1 << 20

// scanRemembered is Scan, remembering its answer for text.
func scanRemembered(text string) []Finding {
	scanMemo.Lock()
	fs, ok := scanMemo.m[text]
	scanMemo.Unlock()
	if ok {
		return fs
	}
	fs = Scan(text)
	scanMemo.Lock()
	defer scanMemo.Unlock()
	if scanMemo.m == nil || scanMemo.bytes+len(text) > scanMemoBytes {
		scanMemo.m, scanMemo.bytes = map[string][]Finding{}, 0
	}
	if len(text) <= scanMemoBytes/4 {
		scanMemo.m[text] = fs
		scanMemo.bytes += len(text)
	}
	return fs
}
