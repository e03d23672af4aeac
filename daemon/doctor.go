package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/fusefs"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/wire"
)

// Doctor checks the running daemon: the models, the model-identity marker,
// pending embeddings, index consistency and the mount.
func (m *Main) Doctor(ctx context.Context) wire.Doctor {
	if m.stack == nil {
		return wire.Doctor{Checks: []wire.Check{{Name: "daemon", Detail: "not started"}}}
	}
	// Closes whose rows are deferred are stored first: the counts and the
	// consistency check describe every file written so far.
	var flushErr error
	if m.stack.meta != nil {
		flushErr = m.stack.meta.Flush(ctx)
	}
	d := diagnose(ctx, m.stack.spaces, m.stack.index, m.Config, m.dropped)
	if flushErr != nil {
		d.Checks = append(d.Checks, wire.Check{Name: "closes", Detail: fmt.Sprintf("%d closed files wait for their rows, which cannot be stored (retried): %v", m.stack.meta.Unflushed(), flushErr)})
	}
	return d
}

// OfflineDoctor checks an index and mount point without a running daemon:
// the models, the marker, pending embeddings and index consistency. It does
// not create an index that is missing.
func OfflineDoctor(ctx context.Context, cfg Config) wire.Doctor {
	var d wire.Doctor
	spaces, err := checkModels(ctx)
	if err != nil {
		d.Checks = append(d.Checks, wire.Check{Name: "models", Detail: err.Error()})
		return d
	}
	if !cfg.IndexIsPostgres() {
		if _, err := os.Stat(cfg.Index); err != nil {
			d.Checks = append(d.Checks, wire.Check{Name: "index", Detail: fmt.Sprintf("%s: %v", cfg.Index, err)})
			return d
		}
	}
	ix, _, err := openIndex(ctx, cfg, nil)
	if err != nil {
		d.Checks = append(d.Checks, wire.Check{Name: "index", Detail: err.Error()})
		return d
	}
	defer ix.Close()
	return diagnose(ctx, spaces, ix, cfg, false)
}

func diagnose(ctx context.Context, spaces embedding.Spaces, ix index.Store, cfg Config, dropped bool) wire.Doctor {
	var d wire.Doctor
	add := func(name string, ok bool, format string, args ...any) {
		d.Checks = append(d.Checks, wire.Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	s := struct {
		spaces embedding.Spaces
		index  index.Store
	}{spaces, ix}
	for _, sp := range []struct {
		name string
		e    embedding.Embedder
	}{{embedding.SpaceTags, s.spaces.Tags}, {embedding.SpaceContent, s.spaces.Content}} {
		info := sp.e.Info()
		if err := embedding.Check(ctx, sp.e); err != nil {
			add("model "+sp.name, false, "%v", err)
		} else {
			add("model "+sp.name, true, "%s %s, %d dims, check passed", info.Name, info.Version, info.Dims)
		}
	}
	dir := markerDir(cfg)
	states, err := embedding.ReadMarker(dir)
	switch {
	case err != nil:
		add("marker", false, "unreadable: %v", err)
	case states == nil:
		add("marker", false, "no marker in %s", dir)
	default:
		var parts []string
		ok := true
		for _, sp := range []struct {
			name string
			e    embedding.Embedder
		}{{embedding.SpaceTags, s.spaces.Tags}, {embedding.SpaceContent, s.spaces.Content}} {
			st, has := states[sp.name]
			if embedding.ResetOwed(st, has, sp.e.Info()) {
				ok = false
				parts = append(parts, sp.name+": reset owed")
			} else {
				parts = append(parts, sp.name+": settled on "+sp.e.Info().Name)
			}
		}
		add("marker", ok, "%s", strings.Join(parts, "; "))
	}
	for _, space := range []string{embedding.SpaceTags, embedding.SpaceContent} {
		n, err := s.index.CountNeedingEmbedding(ctx, space)
		if err != nil {
			add("pending "+space, false, "%v", err)
			continue
		}
		// Pending rows are normal while the drain worker runs.
		add("pending "+space, true, "%d rows waiting for a vector", n)
	}
	rep, err := s.index.Check(ctx, false)
	if err != nil {
		add("index", false, "%v", err)
	} else {
		add("index", len(rep.Problems) == 0, "%d files, %d chunks, %d pending, %d problems%s",
			rep.Files, rep.Chunks, rep.Pending, len(rep.Problems), problems(rep.Problems))
	}
	switch cfg.Mode {
	case ModeMount:
		fstype, mounted := fusefs.MountType(cfg.Mount)
		_, serr := os.Stat(cfg.Mount)
		add("mount", mounted && strings.HasPrefix(fstype, "fuse") && serr == nil,
			"%s: mounted=%v type=%s stat=%v, capabilities dropped=%v", cfg.Mount, mounted, fstype, errText(serr), dropped)
	default:
		add("mount", true, "mode %s: no mount by choice", cfg.Mode)
	}
	d.OK = true
	for _, c := range d.Checks {
		d.OK = d.OK && c.OK
	}
	return d
}

func problems(p []string) string {
	if len(p) == 0 {
		return ""
	}
	if len(p) > 5 {
		p = append(p[:5:5], "…")
	}
	return ": " + strings.Join(p, "; ")
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
