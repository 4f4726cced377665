package memory

import "sync"

// The prompt's memory section is rebuilt at every run start, every entry
// shown is scanned first, and so are the workspace's instructions (AGENTS.md,
// agents, skills: ScanDocument); they rarely change between runs, so the
// findings of texts already scanned are remembered, up to scanMemoBytes of
// text (then forgotten all at once). Findings are never modified after a
// scan returns them, so sharing them is safe.
var scanMemo struct {
	sync.Mutex
	m     map[scanKey][]Finding
	bytes int
}

// scanKey is a text and the rules it was scanned with.
type scanKey struct {
	text string
	doc  bool
}

// scanMemoBytes bounds the text the memo keeps.
const scanMemoBytes = 1 << 20

// scanRemembered is Scan (ScanDocument when doc is set), remembering its
// answer for text.
func scanRemembered(text string, doc bool) []Finding {
	key := scanKey{text, doc}
	scanMemo.Lock()
	fs, ok := scanMemo.m[key]
	scanMemo.Unlock()
	if ok {
		return fs
	}
	fs = scanAt(text, doc, 0)
	scanMemo.Lock()
	defer scanMemo.Unlock()
	if scanMemo.m == nil || scanMemo.bytes+len(text) > scanMemoBytes {
		scanMemo.m, scanMemo.bytes = map[scanKey][]Finding{}, 0
	}
	if len(text) <= scanMemoBytes/4 {
		scanMemo.m[key] = fs
		scanMemo.bytes += len(text)
	}
	return fs
}
