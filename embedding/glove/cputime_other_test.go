//go:build !unix

package glove

func cpuSeconds() float64 { return 0 }
