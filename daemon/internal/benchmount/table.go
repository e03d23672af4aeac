package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A table runs each workload on every side and prints a Markdown row per
// workload: each side's result and its time as a ratio to the first
// side's (native).
type table struct {
	sides []side
	// rotate starts each row's runs at the next side, so that no side
	// always runs first or right after another.
	rotate  bool
	rows    int
	samples io.Writer // each side's time per row, for -summarize; nil: none
	reqs    []reqRow
}

// reqRow is the requests each counted side was sent for a workload.
type reqRow struct {
	name string
	per  []counts // by side
}

func (t *table) header() {
	if len(t.sides) == 2 {
		fmt.Printf("| workload | native | semfs mount | ratio (mount/native time) |\n|---|---|---|---|\n")
		return
	}
	fmt.Printf("| workload |")
	for _, s := range t.sides {
		fmt.Printf(" %s |", s.name)
	}
	fmt.Printf("\n|---|%s\n", strings.Repeat("---|", len(t.sides)))
}

// row runs fn on every side's root and prints the results.
func (t *table) row(name string, fn func(root string) (time.Duration, string)) {
	n := len(t.sides)
	ds, texts, reqs := make([]time.Duration, n), make([]string, n), make([]counts, n)
	start := 0
	if t.rotate {
		start = t.rows % n
	}
	t.rows++
	for k := range n {
		i := (start + k) % n
		s := t.sides[i]
		c0 := s.reqs.snapshot()
		ds[i], texts[i] = fn(s.root)
		reqs[i] = s.reqs.snapshot().sub(c0)
	}
	if n == 2 {
		fmt.Printf("| %s | %s | %s | %.2f× |\n", name, texts[0], texts[1], ratio(ds[1], ds[0]))
	} else {
		fmt.Printf("| %s | %s |", name, texts[0])
		for i := 1; i < n; i++ {
			fmt.Printf(" %s; **%.2f×** |", texts[i], ratio(ds[i], ds[0]))
		}
		fmt.Println()
	}
	counted := false
	for i, s := range t.sides {
		counted = counted || s.reqs != nil
		if t.samples != nil {
			fmt.Fprintf(t.samples, "%s\t%s\t%d\t%d\n", name, s.name, ds[i], ds[0])
		}
	}
	if counted {
		t.reqs = append(t.reqs, reqRow{name, reqs})
	}
}

// printRequests prints the requests each counted side was sent per
// workload.
func (t *table) printRequests() {
	if len(t.reqs) == 0 {
		return
	}
	fmt.Printf("\nFUSE requests the reference servers were sent:\n\n| workload |")
	var counted []int
	for i, s := range t.sides {
		if s.reqs != nil {
			counted = append(counted, i)
			fmt.Printf(" %s |", s.name)
		}
	}
	fmt.Printf("\n|---|%s\n", strings.Repeat("---|", len(counted)))
	for _, r := range t.reqs {
		fmt.Printf("| %s |", r.name)
		for _, i := range counted {
			fmt.Printf(" %s (%d) |", r.per[i], r.per[i].total())
		}
		fmt.Println()
	}
}

func ratio(d, native time.Duration) float64 {
	return float64(d) / float64(native)
}

// summarize reads the samples of -samples runs (lines of workload, side,
// the side's time and the first side's time in nanoseconds, tab
// separated) and writes a Markdown table of each side's median time and
// median ratio per workload, with the ratios' samples, workloads and
// sides in the order first seen.
func summarize(r io.Reader, w io.Writer) error {
	type cell struct{ times, ratios []float64 }
	var rows, sides []string
	cells := map[[2]string]*cell{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			return fmt.Errorf("samples line %d: want 4 tab-separated fields (workload, side, time, native time), got %d", line, len(f))
		}
		d, err1 := strconv.ParseInt(f[2], 10, 64)
		nd, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || d <= 0 || nd <= 0 {
			return fmt.Errorf("samples line %d: times %q and %q must be positive nanoseconds", line, f[2], f[3])
		}
		if !slices.Contains(rows, f[0]) {
			rows = append(rows, f[0])
		}
		if !slices.Contains(sides, f[1]) {
			sides = append(sides, f[1])
		}
		k := [2]string{f[0], f[1]}
		if cells[k] == nil {
			cells[k] = &cell{}
		}
		cells[k].times = append(cells[k].times, float64(d))
		cells[k].ratios = append(cells[k].ratios, float64(d)/float64(nd))
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Fprintf(w, "| workload |")
	for _, s := range sides {
		fmt.Fprintf(w, " %s |", s)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(sides)))
	for _, row := range rows {
		fmt.Fprintf(w, "| %s |", row)
		for i, s := range sides {
			c := cells[[2]string{row, s}]
			switch {
			case c == nil:
				fmt.Fprintf(w, " |")
			case i == 0:
				fmt.Fprintf(w, " %s (n=%d) |", fmtDuration(time.Duration(median(c.times))), len(c.times))
			default:
				var rs []string
				for _, x := range c.ratios {
					rs = append(rs, strconv.FormatFloat(x, 'f', 2, 64))
				}
				fmt.Fprintf(w, " %s; **%.2f×** (%s) |", fmtDuration(time.Duration(median(c.times))), median(c.ratios), strings.Join(rs, ", "))
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// median is the middle of xs, or the mean of the two middle values when
// there is an even number of them; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}

// fmtDuration prints d in the unit that suits its size: s, ms or µs.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	default:
		return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000)
	}
}
