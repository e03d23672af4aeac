package use

import (
	"math"
)

// The forward pass mirrors the TensorFlow.js graph of USE Lite (see
// scripts/models/use/README.md for the op-by-op reading):
//
//	x0  = e + (e + timing(pos))             e = embedding row, pos = token position
//	h   = LN(x0)                            256 wide
//	a   = MHA(h) · Wo + bo                  4 heads of 64, output 512 wide
//	x1  = a + (x0 · Wres + bres)
//	x2  = x1 + FFN(LN(x1))                  512 → 1536 (ReLU) → 512
//	x3  = x2 + MHA(LN(x2)) · Wo + bo        4 heads of 128
//	x4  = x3 + FFN(LN(x3))
//	y   = tanh(mean(x4) · Wh + bh), then L2-normalised
//
// Sentences never see each other's tokens (attention is per sentence), so a
// batch is processed as one matrix of all its tokens for the dense layers.

// scratch holds the per-batch activations; it is reused through a sync.Pool.
type scratch struct {
	x, h, qkv, att, ff, tmp []float32
	probs                   []float32
	// workers > 1 lets each matrix product use that many goroutines; Embed
	// sets it when a call has too little work to give each core a chunk.
	workers int
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n, n+n/4)
	}
	return b[:n]
}

// forward embeds the token sequences seqs (each at most maxTokens long) into
// out (len(seqs) rows of modelDim).
func (w *weights) forward(s *scratch, seqs [][]int32, out [][]float32) {
	offs := make([]int, len(seqs)+1)
	for i, q := range seqs {
		offs[i+1] = offs[i] + len(q)
	}
	n := offs[len(seqs)]
	// Room for 5 rows beyond n (and beyond the number of texts): linear
	// then runs whole 6-row blocks.
	rows := max(n, len(seqs)) + 5
	s.x = grow(s.x, rows*modelDim)
	s.h = grow(s.h, rows*modelDim)
	s.qkv = grow(s.qkv, rows*3*modelDim)
	s.att = grow(s.att, rows*modelDim)
	s.ff = grow(s.ff, rows*ffnDim)
	s.tmp = grow(s.tmp, rows*modelDim)
	s.probs = grow(s.probs, maxTokens)
	par := s.workers

	// Token embeddings plus timing signal, 256 wide, into tmp.
	x0 := s.tmp[:n*embDim]
	ht := halfTable()
	for si, q := range seqs {
		for p, id := range q {
			row := x0[(offs[si]+p)*embDim : (offs[si]+p+1)*embDim]
			e := w.emb[int(id)*embDim : (int(id)+1)*embDim]
			sig := w.signal[p*embDim : (p+1)*embDim]
			for c, h := range e {
				v := ht[h]
				row[c] = v + (v + sig[c])
			}
		}
	}

	// Layer 0.
	L := &w.layers[0]
	h := s.h[:n*embDim]
	layerNorm(h, x0, n, embDim, L.ln1g, L.ln1b)
	qkv := s.qkv[:n*3*embDim]
	linear(qkv, h, n, &L.qkv, L.qkvB, false, par)
	att := s.att[:n*embDim]
	attention(att, qkv, offs, embDim, L.scale, s.probs)
	x := s.x[:n*modelDim]
	linear(x, att, n, &L.out, L.outB, false, par)
	res := s.h[:n*modelDim] // h is free again
	linear(res, x0, n, &L.res, L.resB, false, par)
	for i := range x {
		x[i] += res[i]
	}
	ffn(s, x, n, L)

	// Layer 1.
	L = &w.layers[1]
	h = s.h[:n*modelDim]
	layerNorm(h, x, n, modelDim, L.ln1g, L.ln1b)
	qkv = s.qkv[:n*3*modelDim]
	linear(qkv, h, n, &L.qkv, L.qkvB, false, par)
	att = s.att[:n*modelDim]
	attention(att, qkv, offs, modelDim, L.scale, s.probs)
	linear(x, att, n, &L.out, L.outB, true, par)
	ffn(s, x, n, L)

	// Mean pooling, tanh projection, L2 normalisation.
	pooled := s.h[:len(seqs)*modelDim]
	for si := range seqs {
		p := pooled[si*modelDim : (si+1)*modelDim]
		clear(p)
		for t := offs[si]; t < offs[si+1]; t++ {
			row := x[t*modelDim : (t+1)*modelDim]
			for c, v := range row {
				p[c] += v
			}
		}
		cnt := float32(max(len(seqs[si]), 1))
		for c := range p {
			p[c] /= cnt
		}
	}
	y := s.tmp[:len(seqs)*modelDim]
	linear(y, pooled, len(seqs), &w.head, w.headB, false, par)
	for si := range seqs {
		row := y[si*modelDim : (si+1)*modelDim]
		var ss float32
		for c, v := range row {
			t := float32(math.Tanh(float64(v)))
			row[c] = t
			ss += t * t
		}
		inv := float32(1 / math.Sqrt(float64(max(ss, 1e-12))))
		o := out[si]
		for c, v := range row {
			o[c] = v * inv
		}
	}
}

// ffn applies x += FFN(LN(x)) in place.
func ffn(s *scratch, x []float32, n int, L *layer) {
	h := s.h[:n*modelDim]
	layerNorm(h, x, n, modelDim, L.ln2g, L.ln2b)
	f := s.ff[:n*ffnDim]
	linear(f, h, n, &L.ff1, L.ff1B, false, s.workers)
	for i, v := range f {
		if v < 0 {
			f[i] = 0
		}
	}
	linear(x, f, n, &L.ff2, L.ff2B, true, s.workers)
}

// layerNorm normalises each of the n rows of src (width d) into dst.
func layerNorm(dst, src []float32, n, d int, g, b []float32) {
	for i := 0; i < n; i++ {
		x := src[i*d : (i+1)*d]
		y := dst[i*d : (i+1)*d]
		var mean float32
		for _, v := range x {
			mean += v
		}
		mean /= float32(d)
		var vr float32
		for _, v := range x {
			dv := v - mean
			vr += dv * dv
		}
		vr /= float32(d)
		r := float32(1 / math.Sqrt(float64(vr+lnEpsilon)))
		for c, v := range x {
			y[c] = g[c]*r*(v-mean) + b[c]
		}
	}
}

// attention computes multi-head self-attention within each sentence. qkv
// holds, per token, q, k and v (each d wide, numHeads heads of d/numHeads);
// dst receives the heads' outputs concatenated, d wide.
func attention(dst, qkv []float32, offs []int, d int, scale float32, probs []float32) {
	dh := d / numHeads
	stride := 3 * d
	simd := hasSIMD && dh%8 == 0
	q := make([]float32, dh)
	var s4 [4]float32
	for si := 0; si+1 < len(offs); si++ {
		lo, hi := offs[si], offs[si+1]
		for hd := 0; hd < numHeads; hd++ {
			kOff, vOff := d+hd*dh, 2*d+hd*dh
			for i := lo; i < hi; i++ {
				qi := qkv[i*stride+hd*dh : i*stride+hd*dh+dh]
				for c, v := range qi {
					q[c] = v * scale
				}
				p := probs[:hi-lo]
				j := lo
				if simd {
					for ; j+4 <= hi; j += 4 {
						dot1x4(&q[0], &qkv[j*stride+kOff], stride, dh, &s4)
						copy(p[j-lo:j-lo+4], s4[:])
					}
				}
				for ; j < hi; j++ {
					p[j-lo] = dot(q, qkv[j*stride+kOff:j*stride+kOff+dh])
				}
				m := float32(math.Inf(-1))
				for _, v := range p {
					m = max(m, v)
				}
				var sum float32
				for j := range p {
					e := float32(math.Exp(float64(p[j] - m)))
					p[j] = e
					sum += e
				}
				for j := range p {
					p[j] /= sum
				}
				o := dst[i*d+hd*dh : i*d+hd*dh+dh]
				if simd && dh%64 == 0 {
					_ = qkv[(hi-1)*stride+vOff+dh-1]
					for c := 0; c < dh; c += 64 {
						wsum64(&p[0], &qkv[lo*stride+vOff+c], stride, hi-lo, &o[c])
					}
					continue
				}
				clear(o)
				for j := lo; j < hi; j++ {
					pj := p[j-lo]
					vj := qkv[j*stride+vOff : j*stride+vOff+dh]
					for c, v := range vj {
						o[c] += pj * v
					}
				}
			}
		}
	}
}
