package vecindex

import (
	"bytes"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the file decoder: it must return an index
// or an error, never panic or allocate more than the input justifies. Seeds
// live in testdata/fuzz/FuzzLoad plus the valid files added here.
func FuzzLoad(f *testing.F) {
	for _, tc := range []struct{ n, dim int }{{0, 1}, {2, 3}} {
		idx := NewFlat(tc.dim)
		if err := idx.Add(randVecs(1, tc.n, tc.dim)); err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeTo(&buf, idx); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := decode(b)
		if err != nil {
			return
		}
		// A file that decodes must re-encode to the same bytes.
		var buf bytes.Buffer
		if err := encodeTo(&buf, idx); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("re-encoding differs: %d bytes in, %d out", len(b), buf.Len())
		}
	})
}
