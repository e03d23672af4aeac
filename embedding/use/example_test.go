package use_test

import (
	"context"
	"fmt"
	"log"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/use"
)

func Example() {
	m, err := use.Load() // decoded and verified once, then cached
	if err != nil {
		log.Fatal(err) // wraps embedding.ErrBrokenModel: refuse to start
	}
	v, err := m.Embed(context.Background(), []string{
		"fix the flaky login test",
		"repair the unreliable sign-in unit test",
		"quarterly budget spreadsheet",
	})
	if err != nil {
		log.Fatal(err)
	}
	info := m.Info()
	fmt.Println(info.Dims, len(v))
	fmt.Println(embedding.Cosine(v[0], v[1]) > embedding.Cosine(v[0], v[2]))
	// Output:
	// 512 3
	// true
}
