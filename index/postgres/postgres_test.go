package postgres

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/indextest"
	"github.com/semfs/semfs/internal/testserver"
)

var dbSeq atomic.Int64

// freshDB creates an empty database on the server and returns its URL.
func freshDB(t *testing.T, pg *testserver.Postgres) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("t%d", dbSeq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", pg.Port, name)
}

func TestStoreSuite(t *testing.T) {
	pg := testserver.StartPostgres(t)
	indextest.Run(t, func(t *testing.T) index.Store {
		ix, err := Open(context.Background(), freshDB(t, pg), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	})
}
