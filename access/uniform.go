package access

import "github.com/semfs/semfs"

// Refuses reports whether the path rules refuse name (give it None, so
// that it is hidden from listings and refused when named, unless it is a
// directory on the way to a grant), and whether they may refuse name or
// anything below it. A front end that caches answers for every caller at
// once (the kernel's caches of a FUSE mount) uses it to tell which names
// and listings can differ between policies. Visibility by groups is not
// considered. An invalid path is refused.
func (f *FS) Refuses(name string) (at, below bool) {
	p, err := semfs.Clean("access", name)
	if err != nil {
		return true, true
	}
	cp := f.pol
	if !cp.anyNone {
		return false, false
	}
	var buf [16]uint64
	s := cp.walk(p, buf[:0])
	a, _ := cp.decide(s)
	return a == None && p != "/", cp.refusesBelow(s)
}

// refusesBelow reports whether some path at or below the path whose
// states are s could be None.
func (cp *policy) refusesBelow(s states) bool {
	for i := len(cp.rules) - 1; i >= 0; i-- {
		r := &cp.rules[i]
		if s[i] == 0 {
			continue
		}
		if s[i]&r.done != 0 {
			// r decides the whole subtree but what later rules match.
			return r.Access == None
		}
		if r.Access == None {
			return true // the pattern can still match something deeper
		}
	}
	return cp.def == None
}
