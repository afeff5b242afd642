package hfhub

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// bar draws one download's progress on a terminal line, at most ten times
// a second. A nil or write-less bar draws nothing.
type bar struct {
	w           io.Writer
	name        string
	total, have int64
	start, last time.Time
	base        int64
}

func newBar(w io.Writer, name string, total, have int64) *bar {
	now := time.Now()
	return &bar{w: w, name: name, total: total, have: have, base: have, start: now}
}

func (b *bar) Write(p []byte) (int, error) {
	b.have += int64(len(p))
	if b.w != nil {
		if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond {
			b.last = now
			b.draw(now)
		}
	}
	return len(p), nil
}

func (b *bar) draw(now time.Time) {
	const width = 30
	frac := 1.0
	if b.total > 0 {
		frac = float64(b.have) / float64(b.total)
	}
	filled := int(frac * width)
	if filled > width {
		filled = width
	}
	rate := ""
	if el := now.Sub(b.start).Seconds(); el > 0.2 {
		rate = "  " + HumanBytes(int64(float64(b.have-b.base)/el)) + "/s"
	}
	fmt.Fprintf(b.w, "\r%s [%s%s] %3.0f%% %s/%s%s\x1b[K", b.name, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		frac*100, HumanBytes(b.have), HumanBytes(b.total), rate)
}

// done draws the final state and ends the line.
func (b *bar) done(ok bool) {
	if b.w == nil {
		return
	}
	b.draw(time.Now())
	if ok {
		fmt.Fprintln(b.w)
	} else {
		fmt.Fprintln(b.w, " (interrupted)")
	}
}

// HumanBytes formats n bytes as 12.3 MiB (binary units; below 1 KiB, "N B").
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
