package embedding

// SetWriteMarker replaces how the marker is written, to inject failures; it
// returns a function restoring the real writer.
func SetWriteMarker(f func(dir string, write func() error) error) (restore func()) {
	old := writeMarker
	writeMarker = func(dir string, m marker) error {
		return f(dir, func() error { return old(dir, m) })
	}
	return func() { writeMarker = old }
}
