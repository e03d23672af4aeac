package cli

import (
	"os"

	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on a terminal, and nothing elsewhere.
type bar struct{ pb *progressbar.ProgressBar }

// progress returns a bar of total steps when stderr is a terminal and
// --json is off.
func (a *App) progress(total int, what string) *bar {
	f, ok := a.Stderr.(*os.File)
	if !ok || a.JSON || total <= 0 {
		return &bar{}
	}
	if info, err := f.Stat(); err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return &bar{}
	}
	return &bar{progressbar.NewOptions(total, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100_000_000))}
}

func (b *bar) set(n int) {
	if b.pb != nil {
		b.pb.Set(n)
	}
}

func (b *bar) done(n int) {
	if b.pb != nil {
		b.pb.Set(n)
		b.pb.Finish()
	}
}
