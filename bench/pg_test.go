package bench

import (
	"context"

	"github.com/jackc/pgx/v5"
)

func pgExec(ctx context.Context, dsn, sql string) (int64, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}
