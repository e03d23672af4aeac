package postgres

import (
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/testserver"
)

// testNoLostUpdateBetweenDaemons: two daemons' meta layers over one
// database and one tree. While one builds a file's row from the stored
// one, the other changes that row: the save must not write back the
// groups the other daemon set (which exposed a file it restricted), and
// the tag must not write back the bytes' fields of the other daemon's
// save (its hash and size went stale); see indextest.NoLostUpdate.
func testNoLostUpdateBetweenDaemons(t *testing.T, pg *testserver.Postgres) {
	indextest.NoLostUpdate(t, func(t *testing.T) func() index.Store {
		dsn := freshDB(t, pg)
		return func() index.Store { return openStore(t, dsn) }
	})
}
