package postgres

import (
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/testserver"
)

// TestReconcileNoLostUpdateBetweenDaemons: one daemon reconciles files
// changed behind its back while another tags and restricts them, over
// one database and one tree; the other's tags and groups survive and the
// reconcile's fields of the bytes are written (see
// indextest.ReconcileNoLostUpdate). It starts a server of its own.
func TestReconcileNoLostUpdateBetweenDaemons(t *testing.T) {
	t.Parallel()
	pg := testserver.StartPostgres(t)
	indextest.ReconcileNoLostUpdate(t, func(t *testing.T) func() index.Store {
		dsn := freshDB(t, pg)
		return func() index.Store { return openStore(t, dsn) }
	})
}
