package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// table is the printed result: headings, each followed by rows whose
// values line up.
type table struct {
	lines []tableLine
}

type tableLine struct {
	text, value string
	heading     bool
}

func (t *table) heading(s string) { t.lines = append(t.lines, tableLine{text: s, heading: true}) }

func (t *table) row(name, value string) {
	t.lines = append(t.lines, tableLine{text: "  " + name, value: value})
}

func (t *table) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range t.lines {
		if l.heading {
			tw.Flush()
			fmt.Fprintln(w, l.text)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\n", l.text, l.value)
	}
	tw.Flush()
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// mib formats bytes in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
