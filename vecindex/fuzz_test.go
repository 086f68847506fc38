package vecindex

import (
	"bytes"
	"context"
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

// FuzzLoadIVF does for the IVF decoder what FuzzLoad does for Flat's: any
// bytes give an index or an error, and a decoded file re-encodes to itself.
func FuzzLoadIVF(f *testing.F) {
	for _, tc := range []struct{ n, dim, nlist int }{{0, 1, 0}, {3, 2, 2}, {5, 3, 1}} {
		idx, err := BuildIVF(context.Background(), tc.dim, randVecs(1, tc.n, tc.dim), IVFOptions{NList: tc.nlist})
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeIVF(&buf, idx); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := decodeIVF(b)
		if err != nil {
			return
		}
		if idx.Len() > 0 {
			// A decoded index must be searchable without panicking.
			if _, err := idx.Search(context.Background(), make([]float32, idx.Dim()), idx.Len()); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := encodeIVF(&buf, idx); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("re-encoding differs: %d bytes in, %d out", len(b), buf.Len())
		}
	})
}
