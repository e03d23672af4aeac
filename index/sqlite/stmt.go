package sqlite

import (
	"context"
	"database/sql"
)

// Statements of a write transaction are prepared once per transaction and
// reused across its rows: re-parsing SQL for every statement was a large
// share of the per-file cost of a batched ingest. Write transactions are
// serialised by wmu, so one cache (reset at each BeginTx) suffices.

func (ix *Index) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if ix.curTx != tx {
		ix.curTx, ix.txStmts = tx, map[string]*sql.Stmt{}
	}
	if st, ok := ix.txStmts[q]; ok {
		return st, nil
	}
	st, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	ix.txStmts[q] = st
	return st, nil
}

// txExec runs a statement inside tx through the transaction's cache.
func (ix *Index) txExec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	st, err := ix.txStmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (ix *Index) txQuery(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	st, err := ix.txStmt(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (ix *Index) txQueryRow(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	st, err := ix.txStmt(ctx, tx, q)
	if err != nil {
		return tx.QueryRowContext(ctx, q, args...) // reports the error
	}
	return st.QueryRowContext(ctx, args...)
}

// dbStmt returns statement q of a write transaction on ix.db, prepared
// once per connection rather than once per transaction: for the
// statements every write runs once (readState, saveState), parsing them
// was most of their cost. A transaction writeOn runs on another handle
// (a merge's, on vdb) prepares them as txStmt does. Call it holding wmu.
func (ix *Index) dbStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	if ix.txDB != ix.db {
		return ix.txStmt(ctx, tx, q)
	}
	st, ok := ix.dbStmts[q]
	if !ok {
		var err error
		if st, err = ix.db.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
		if ix.dbStmts == nil {
			ix.dbStmts = map[string]*sql.Stmt{}
		}
		ix.dbStmts[q] = st
	}
	return tx.StmtContext(ctx, st), nil
}
