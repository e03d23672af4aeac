package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotMatchesGo checks the dot product used by scans (SIMD where the
// CPU has it) against the plain loop for every length up to 300, including
// the 100 dims of the default model, within float32 rounding.
func TestDotMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for n := 0; n <= 300; n++ {
		a, b := make([]float32, n), make([]float32, n+3) // b longer: only len(a) counts
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		got, plain := dot(a, b), dotGo(a, b)
		tol := 1e-5 * (1 + math.Sqrt(float64(n)))
		if math.Abs(float64(got)-want) > tol || math.Abs(float64(plain)-want) > tol {
			t.Fatalf("n=%d: dot %v, dotGo %v, float64 %v", n, got, plain, want)
		}
	}
}

// BenchmarkDot compares the dot products at the default model's 100 dims.
func BenchmarkDot(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := randUnit(rng, 100), randUnit(rng, 100)
	var sink float32
	for name, f := range map[string]func(a, b []float32) float32{"go": dotGo, "dispatch": dot} {
		b.Run(fmt.Sprintf("fn=%s", name), func(b *testing.B) {
			for b.Loop() {
				sink += f(x, y)
			}
		})
	}
	_ = sink
}
