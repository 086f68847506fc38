package extsort

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// sortedCopy is the reference: a stable sort of the records by key.
func sortedCopy(recs []uint32, words, keys int) []uint32 {
	n := len(recs) / words
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ra, rb := recs[a*words:], recs[b*words:]
		for k := 0; k < keys; k++ {
			if ra[k] != rb[k] {
				if ra[k] < rb[k] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	out := make([]uint32, 0, len(recs))
	for _, i := range idx {
		out = append(out, recs[i*words:(i+1)*words]...)
	}
	return out
}

func randomRecs(r *rand.Rand, n, words int, maxV []uint32) []uint32 {
	recs := make([]uint32, n*words)
	for i := 0; i < n; i++ {
		for w := 0; w < words; w++ {
			if w < len(maxV) {
				recs[i*words+w] = r.Uint32N(maxV[w])
			} else {
				recs[i*words+w] = uint32(i) // payload: the input order
			}
		}
	}
	return recs
}

func TestSortInMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n, words, keys int
		maxV           []uint32
	}{
		{0, 2, 1, []uint32{10}},
		{1, 2, 1, []uint32{10}},
		{50, 2, 1, []uint32{10}},  // insertion sort
		{5000, 2, 1, []uint32{7}}, // many ties: stability
		{5000, 4, 3, []uint32{1 << 31, 3000, 1 << 20}},
		{5000, 2, 2, []uint32{1, 1 << 30}}, // constant first key word
		{5000, 3, 2, []uint32{1 << 17, 1 << 31}},
	} {
		recs := randomRecs(r, tc.n, tc.words, tc.maxV)
		want := sortedCopy(recs, tc.words, tc.keys)
		got := Sort(slices.Clone(recs), make([]uint32, len(recs)), tc.words, tc.keys)
		if !slices.Equal(got, want) {
			t.Errorf("Sort(n=%d words=%d keys=%d) differs from a stable sort", tc.n, tc.words, tc.keys)
		}
	}
}

// The sorter spills runs and merges them (in several passes when there
// are more runs than the fan-in) to the same order as a stable sort.
func TestSorterRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name   string
		n      int
		mem    int64
		fanIn  int
		maxV   []uint32
		spills bool
	}{
		{"memory", 3000, 1 << 20, MaxFanIn, []uint32{100, 1 << 30, 5}, false},
		{"runs", 20000, 8 * 4 * 1024, MaxFanIn, []uint32{100, 1 << 30, 5}, true},
		{"passes", 20000, 8 * 4 * 1024, 3, []uint32{50, 4, 5}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := New(dir, 4, 3, tc.mem)
			s.fanIn = tc.fanIn
			recs := randomRecs(r, tc.n, 4, tc.maxV)
			for i := 0; i < tc.n; i++ {
				if err := s.Add(recs[i*4 : i*4+4]...); err != nil {
					t.Fatal(err)
				}
			}
			if s.Len() != int64(tc.n) {
				t.Fatalf("Len = %d, want %d", s.Len(), tc.n)
			}
			if got := len(s.runs) > 0; got != tc.spills {
				t.Fatalf("spilled = %v, want %v", got, tc.spills)
			}
			it, err := s.Iter()
			if err != nil {
				t.Fatal(err)
			}
			var got []uint32
			for {
				rec, ok := it.Next()
				if !ok {
					break
				}
				got = append(got, rec...)
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, sortedCopy(recs, 4, 3)) {
				t.Fatal("merged runs differ from a stable sort")
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 0 {
				t.Fatalf("%d run files left after Close", len(left))
			}
		})
	}
}

func TestAddWrongSize(t *testing.T) {
	s := New(t.TempDir(), 2, 1, 1<<20)
	if err := s.Add(1, 2, 3); err == nil {
		t.Fatal("a 3-word record was accepted by a 2-word sorter")
	}
}

func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1 << 20
	recs := randomRecs(r, n, 4, []uint32{1 << 26, 3000, 1 << 26})
	work, tmp := make([]uint32, len(recs)), make([]uint32, len(recs))
	for b.Loop() {
		copy(work, recs)
		Sort(work, tmp, 4, 3)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
