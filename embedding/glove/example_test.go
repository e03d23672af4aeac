package glove_test

import (
	"context"
	"fmt"

	"github.com/semfs/semfs/embedding"
	"github.com/semfs/semfs/embedding/glove"
)

func Example() {
	m, err := glove.Load()
	if err != nil {
		fmt.Println(err) // the binary's weights are damaged: refuse to start
		return
	}
	v, err := m.Embed(context.Background(), []string{
		"fix the auth bug in login handler",
		"repair authentication failure on sign-in",
		"bake bread with flour and yeast",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	info := m.Info()
	fmt.Println(info.Name, info.Dims)
	fmt.Println(embedding.Cosine(v[0], v[1]) > embedding.Cosine(v[0], v[2]))
	// Output:
	// glove-6b-100d-int8 100
	// true
}

func ExampleModel_Words() {
	m, _ := glove.Load()
	fmt.Println(m.Words("parseHTTPRequest in src/auth/login_handler.go"))
	// Output: [parse http request in src auth login handler go code]
}
