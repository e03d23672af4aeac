package semfstest_test

import (
	"context"
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

// A writable backend runs the whole suite with a constructor of empty
// trees.
func ExampleRun() {
	_ = func(t *testing.T) {
		semfstest.Run(t, func(t *testing.T) semfs.FS { return memfs.New() })
	}
}

// A read-only backend cannot be written by the suite: it gives a Seed
// function that builds a tree holding the files the suite asks for.
func ExampleSeed() {
	_ = func(t *testing.T) {
		semfstest.Run(t, nil, semfstest.ReadOnly(), semfstest.Seed(func(tb semfstest.TB, files map[string][]byte) semfs.FS {
			m := memfs.New() // stands for the read-only store being populated
			for p, data := range files {
				if err := m.WriteFile(context.Background(), p, data, 0o644); err != nil {
					tb.Fatalf("seed %s: %v", p, err)
				}
			}
			return readOnly{m} // the read-only view under test
		}))
	}
}
