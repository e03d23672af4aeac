package glove

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math"
	"unsafe"

	"github.com/semfs/semfs/embedding"
)

// The weights file, version 1, little-endian throughout:
//
//	magic    [8]byte  "SEMFSGLV"
//	version  uint32   1
//	dims     uint32   values per row (100)
//	count    uint32   number of words (rows)
//	blobLen  uint32   bytes of the word blob
//	common   [dims]float32     unit vector SIF removes from every text vector
//	scales   [count]float32    row i's value j is scales[i] * rows[i*dims+j]
//	offsets  [count+1]uint32   word i is blob[offsets[i]:offsets[i+1]]
//	blob     [blobLen]byte     the words, lower-case ASCII letters and digits
//	rows     [count*dims]int8
//
// Words are in GloVe's vocabulary order, which is frequency order: a row's
// index is its frequency rank, which the SIF weighting reads. Any change to
// this layout bumps formatVersion and the model Version.
const (
	magic         = "SEMFSGLV"
	formatVersion = 1
	headerLen     = len(magic) + 16
)

// corrupt returns the error every load failure has: a *fs.PathError naming
// the weights file, wrapping embedding.ErrBrokenModel, saying what to do.
func corrupt(format string, args ...any) error {
	return &fs.PathError{
		Op:   "load glove",
		Path: weightsPath,
		Err: fmt.Errorf("%w: %s; the binary was built from damaged weights: re-derive them with scripts/models/glove.sh and rebuild",
			embedding.ErrBrokenModel, fmt.Sprintf(format, args...)),
	}
}

// parse checks data (the whole weights file) against wantSHA256 and its
// layout, and builds a Model that reads rows and words from data in place.
// It allocates the per-row weights, the word offsets and the lookup table.
func parse(data string, wantSHA256 string) (*Model, error) {
	// The weights are read-only embedded data; hash them in place rather
	// than copy 11 MB.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(data), len(data)))
	if got := hex.EncodeToString(sum[:]); got != wantSHA256 {
		return nil, corrupt("SHA-256 is %s, want %s (%d bytes)", got, wantSHA256, len(data))
	}
	if len(data) < headerLen {
		return nil, corrupt("file is %d bytes, shorter than its %d-byte header", len(data), headerLen)
	}
	if data[:len(magic)] != magic {
		return nil, corrupt("bad magic %q, want %q", data[:len(magic)], magic)
	}
	u32 := func(off int) uint32 {
		return uint32(data[off]) | uint32(data[off+1])<<8 | uint32(data[off+2])<<16 | uint32(data[off+3])<<24
	}
	version := u32(8)
	dims := int(u32(12))
	count := int(u32(16))
	blobLen := int(u32(20))
	if version != formatVersion {
		return nil, corrupt("format version %d, this build reads %d", version, formatVersion)
	}
	if dims <= 0 || dims > maxDims || count <= 0 || count > 1<<24 {
		return nil, corrupt("implausible header: dims %d, count %d", dims, count)
	}
	commonAt := headerLen
	scalesAt := commonAt + 4*dims
	offsetsAt := scalesAt + 4*count
	blobAt := offsetsAt + 4*(count+1)
	rowsAt := blobAt + blobLen
	end := rowsAt + count*dims
	if len(data) != end {
		return nil, corrupt("file is %d bytes, header says %d (truncated or padded)", len(data), end)
	}

	m := &Model{
		dims:    dims,
		count:   count,
		blob:    data[blobAt:rowsAt],
		rows:    data[rowsAt:end],
		offsets: make([]uint32, count+1),
		weight:  make([]float32, count),
		common:  make([]float32, dims),
	}
	var norm float64
	for j := range dims {
		x := math.Float32frombits(u32(commonAt + 4*j))
		m.common[j] = x
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-3 {
		return nil, corrupt("common direction has length %.4f, want 1", math.Sqrt(norm))
	}
	for i := range m.offsets {
		m.offsets[i] = u32(offsetsAt + 4*i)
		if i > 0 && m.offsets[i] < m.offsets[i-1] || int(m.offsets[i]) > blobLen {
			return nil, corrupt("word offset %d out of order", i)
		}
	}
	for i := range count {
		scale := math.Float32frombits(u32(scalesAt + 4*i))
		if !(scale > 0) || math.IsInf(float64(scale), 0) {
			return nil, corrupt("row %d has scale %v", i, scale)
		}
		m.weight[i] = sif(i) * scale
	}
	m.buildTable()
	m.ext = make(map[string][]int, len(extensions))
	for ext, names := range extensions {
		for _, name := range names {
			if r := m.lookup([]byte(name)); r >= 0 {
				m.ext[ext] = append(m.ext[ext], r)
			}
		}
	}
	return m, nil
}

// maxDims bounds the row width the loader accepts.
const maxDims = 4096

// sifA is the a of SIF's a/(a+p(w)). Word probabilities are not in the
// file; p is estimated from the frequency rank r (0-based) with Zipf's law,
// p(r) = 1/((r+1)·H) where H ≈ ln(400000)+0.577 normalises over GloVe's
// 400k-word vocabulary. Chosen on testdata/paraphrase.tsv (see
// docs/bench/embedding.md).
const sifA = 1e-3

func sif(rank int) float32 {
	const h = 13.476 // ln(400000) + Euler–Mascheroni
	p := 1 / (float64(rank+1) * h)
	return float32(sifA / (sifA + p))
}

// buildTable fills the open-addressing word → row table: a power-of-two
// array at most half full, holding row+1 (0 means empty), probed linearly.
func (m *Model) buildTable() {
	size := 1
	for size < 2*m.count {
		size <<= 1
	}
	m.table = make([]uint32, size)
	m.mask = uint32(size - 1)
	for i := range m.count {
		w := m.blob[m.offsets[i]:m.offsets[i+1]]
		h := uint32(hashString(w)) & m.mask
		for m.table[h] != 0 {
			h = (h + 1) & m.mask
		}
		m.table[h] = uint32(i + 1)
	}
}

// lookup returns the row of word w, or -1.
func (m *Model) lookup(w []byte) int {
	h := uint32(hashBytes(w)) & m.mask
	for {
		r := m.table[h]
		if r == 0 {
			return -1
		}
		if m.blob[m.offsets[r-1]:m.offsets[r]] == string(w) {
			return int(r - 1)
		}
		h = (h + 1) & m.mask
	}
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashBytes(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}
