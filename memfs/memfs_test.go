package memfs_test

import (
	"testing"

	"github.com/semfs/semfs"
	"github.com/semfs/semfs/memfs"
	"github.com/semfs/semfs/semfstest"
)

func TestConformance(t *testing.T) {
	semfstest.Run(t, func(t *testing.T) semfs.FS { return memfs.New() })
}
