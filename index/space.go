package index

import (
	"fmt"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/embedding"
)

// Columns names the table and columns that hold a vector space's rows.
// Every driver's schema uses these names.
type Columns struct{ Table, Key, Text, Vec, Fresh string }

// SpaceColumns returns the columns of space, or ErrUnknownSpace.
func SpaceColumns(space string) (Columns, error) {
	switch space {
	case embedding.SpaceTags:
		return Columns{"files", "path", "tag_text", "tag_vec", "tag_fresh"}, nil
	case embedding.SpaceContent:
		return Columns{"chunks", "key", "text", "vec", "fresh"}, nil
	}
	return Columns{}, ErrUnknownSpace(space)
}

// ErrUnknownSpace is the error for a vector space no store keeps.
func ErrUnknownSpace(space string) error {
	return semfs.PathErr("embed", "/", semfs.ErrInvalid, fmt.Sprintf("unknown vector space %q; use %q or %q", space, embedding.SpaceTags, embedding.SpaceContent))
}
