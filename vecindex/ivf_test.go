package vecindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
)

// syllables build the invented words of entityNames.
var syllables = strings.Fields("ka lo mi ra ben tor an el is on ur wen dal mar cus fi ne ga sha vel rin tho bra dor ley son ton ham berg ville stein ez ova ski ia elle")

// entityNames returns n synthetic entity-like texts (seeded) in the mix of a
// general KG's entity table: person names ("<first> <last>"), titled works
// and places ("<word> <word> film"), single-word names and Freebase-style
// mids ("m.0xxxx"). As in real names, words come from a fixed vocabulary
// with Zipf-distributed frequencies (a few very common, a long tail), so
// names share words and their n-gram vectors form overlapping clusters
// rather than uniform noise, which no approximate index could beat.
func entityNames(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	invent := func(parts int) string {
		var sb strings.Builder
		for range parts {
			sb.WriteString(syllables[r.IntN(len(syllables))])
		}
		s := sb.String()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	vocab := func(size int) []string {
		v := make([]string, size)
		for i := range v {
			v[i] = invent(2 + r.IntN(2))
		}
		return v
	}
	firsts, lasts, words := vocab(3000), vocab(40000), vocab(60000)
	zf := rand.NewZipf(r, 1.1, 2, uint64(len(firsts)-1))
	zl := rand.NewZipf(r, 1.05, 5, uint64(len(lasts)-1))
	zw := rand.NewZipf(r, 1.05, 5, uint64(len(words)-1))
	kinds := []string{"film", "album", "song", "novel", "river", "county", "university", "fc", "station", "band", "(film)", "church", "school"}
	out := make([]string, n)
	for i := range out {
		switch c := r.IntN(20); {
		case c < 9:
			out[i] = firsts[zf.Uint64()] + " " + lasts[zl.Uint64()]
		case c < 14:
			out[i] = words[zw.Uint64()] + " " + words[zw.Uint64()] + " " + kinds[r.IntN(len(kinds))]
		case c < 16:
			out[i] = "The " + words[zw.Uint64()] + " of " + words[zw.Uint64()]
		case c < 19:
			out[i] = words[zw.Uint64()]
		default:
			out[i] = fmt.Sprintf("m.0%x", r.Uint32()&0xfffff)
		}
	}
	return out
}

// encodeNames encodes texts with the n-gram-only wordvec encoder (no
// downloads) on GOMAXPROCS goroutines and returns the row-major vectors.
func encodeNames(tb testing.TB, texts []string) ([]float32, int) {
	tb.Helper()
	enc := wordvec.New(nil, wordvec.Options{})
	dim := enc.Dim()
	out := make([]float32, len(texts)*dim)
	const chunk = 4096
	chunks := (len(texts) + chunk - 1) / chunk
	errs := make([]error, chunks)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*chunk, min((c+1)*chunk, len(texts))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[c] = enc.Encode(context.Background(), texts[lo:hi], out[lo*dim:hi*dim])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	return out, dim
}

// structured returns n indexed entity-name vectors and nq held-out query
// vectors from the same generator.
func structured(tb testing.TB, n, nq int) (data, queries []float32, dim int) {
	tb.Helper()
	all, dim := encodeNames(tb, entityNames(11, n+nq))
	return all[:n*dim], all[n*dim:], dim
}

// recallAt is the mean fraction of exact's top-k IDs that approx also
// returned, over the queries.
func recallAt(exact, approx [][]Hit) float64 {
	var sum float64
	for i := range exact {
		want := map[int32]bool{}
		for _, h := range exact[i] {
			want[h.ID] = true
		}
		got := 0
		for _, h := range approx[i] {
			if want[h.ID] {
				got++
			}
		}
		if len(exact[i]) > 0 {
			sum += float64(got) / float64(len(exact[i]))
		} else {
			sum++
		}
	}
	return sum / float64(len(exact))
}

// searchAll runs Search for every query of qs.
func searchAll(t testing.TB, ix Index, qs []float32, dim, k int) [][]Hit {
	t.Helper()
	out := make([][]Hit, len(qs)/dim)
	for i := range out {
		hits, err := ix.Search(context.Background(), qs[i*dim:(i+1)*dim], k)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = hits
	}
	return out
}

func TestIVFRecallAndExhaustive(t *testing.T) {
	const n, nq, k = 40_000, 100, 50
	data, qs, dim := structured(t, n, nq)
	flat := NewFlat(dim)
	if err := flat.Add(data); err != nil {
		t.Fatal(err)
	}
	ivf, err := BuildIVF(context.Background(), dim, data, IVFOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ivf.Len() != n || ivf.Dim() != dim || ivf.NList() != DefaultNList(n) || ivf.NProbe() != DefaultNProbe(ivf.NList()) {
		t.Fatalf("Len %d Dim %d NList %d NProbe %d", ivf.Len(), ivf.Dim(), ivf.NList(), ivf.NProbe())
	}
	exact := searchAll(t, flat, qs, dim, k)
	approx := searchAll(t, ivf, qs, dim, k)
	r := recallAt(exact, approx)
	t.Logf("recall@%d = %.3f (n %d, nlist %d, nprobe %d)", k, r, n, ivf.NList(), ivf.NProbe())
	if r < 0.95 {
		t.Errorf("recall@%d = %.3f, want >= 0.95", k, r)
	}
	for i, hits := range approx {
		if len(hits) != k {
			t.Fatalf("query %d: %d hits, want %d", i, len(hits), k)
		}
	}
	// Scanning every list must give Flat's results exactly: same scores
	// (same normalised rows, same dot), same order, same tie rule.
	for i := range 20 {
		got, err := ivf.SearchProbe(context.Background(), qs[i*dim:(i+1)*dim], k, ivf.NList())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exact[i]) {
			t.Fatalf("query %d with nprobe = nlist:\n got %v\nwant %v", i, got, exact[i])
		}
	}
	batch, err := ivf.SearchBatch(context.Background(), qs, k)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(batch, approx) {
		t.Error("SearchBatch differs from Search")
	}
}

func TestIVFTiesMatchFlat(t *testing.T) {
	// Many duplicate rows: equal scores must come out by smaller ID, across
	// lists, as Flat orders them.
	const dim = 4
	base := randVecs(3, 5, dim)
	var data []float32
	for i := range 200 {
		data = append(data, base[(i%5)*dim:(i%5+1)*dim]...)
	}
	data = append(data, make([]float32, 3*dim)...) // zero rows score 0
	flat := NewFlat(dim)
	if err := flat.Add(data); err != nil {
		t.Fatal(err)
	}
	ivf, err := BuildIVF(context.Background(), dim, data, IVFOptions{NList: 8, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	qs := randVecs(4, 10, dim)
	for i := range 10 {
		q := qs[i*dim : (i+1)*dim]
		for _, k := range []int{1, 7, 50, 203, 500} {
			want, _ := flat.Search(context.Background(), q, k)
			got, err := ivf.SearchProbe(context.Background(), q, k, 8)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("query %d k %d:\n got %v\nwant %v", i, k, got, want)
			}
		}
	}
}

func TestIVFSmallAndErrors(t *testing.T) {
	ctx := context.Background()
	// Fewer vectors than the requested lists: nlist is capped, every query
	// still gets min(k, n) hits even with one probe.
	data := randVecs(5, 3, 6)
	ivf, err := BuildIVF(ctx, 6, data, IVFOptions{NList: 100, NProbe: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ivf.NList() != 3 || ivf.NProbe() != 1 {
		t.Fatalf("nlist %d nprobe %d, want 3 1", ivf.NList(), ivf.NProbe())
	}
	flat := NewFlat(6)
	_ = flat.Add(data)
	q := randVecs(6, 1, 6)
	got, err := ivf.Search(ctx, q, 10)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := flat.Search(ctx, q, 10)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("k > n: got %v, want %v", got, want)
	}

	empty, err := BuildIVF(ctx, 6, nil, IVFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := empty.Search(ctx, q, 5); err != nil || len(hits) != 0 || hits == nil {
		t.Fatalf("empty: %v %v", hits, err)
	}

	for name, f := range map[string]func() error{
		"dim mismatch":  func() error { _, err := ivf.Search(ctx, q[:5], 1); return err },
		"k zero":        func() error { _, err := ivf.Search(ctx, q, 0); return err },
		"nan query":     func() error { _, err := ivf.Search(ctx, []float32{1, 0, 0, 0, 0, float32(nanF())}, 1); return err },
		"nprobe zero":   func() error { _, err := ivf.SearchProbe(ctx, q, 1, 0); return err },
		"ragged build":  func() error { _, err := BuildIVF(ctx, 6, data[:7], IVFOptions{}); return err },
		"bad dim":       func() error { _, err := BuildIVF(ctx, 0, nil, IVFOptions{}); return err },
		"nan build":     func() error { _, err := BuildIVF(ctx, 1, []float32{float32(nanF())}, IVFOptions{}); return err },
		"negative":      func() error { _, err := BuildIVF(ctx, 6, data, IVFOptions{NList: -1}); return err },
		"ragged batch":  func() error { _, err := ivf.SearchBatch(ctx, q[:5], 1); return err },
		"batch k zero":  func() error { _, err := ivf.SearchBatch(ctx, q, 0); return err },
		"save bad path": func() error { return ivf.Save(filepath.Join(t.TempDir(), "no", "such", "dir", "x.ivf")) },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ivf.Search(cancelled, q, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("search with cancelled ctx: %v", err)
	}
	if _, err := BuildIVF(cancelled, 6, data, IVFOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("build with cancelled ctx: %v", err)
	}
}

func nanF() float64 { var z float64; return z / z }

func TestIVFSaveLoad(t *testing.T) {
	data, qs, dim := structured(t, 3000, 20)
	ivf, err := BuildIVF(context.Background(), dim, data, IVFOptions{Seed: 3, NProbe: 5})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "e.ivf")
	if err := ivf.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadIVF(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ivf) {
		t.Fatal("loaded index differs from the saved one")
	}
	if !reflect.DeepEqual(searchAll(t, back, qs, dim, 10), searchAll(t, ivf, qs, dim, 10)) {
		t.Fatal("loaded index answers differently")
	}
	// Same seed, same index: the build is deterministic.
	again, err := BuildIVF(context.Background(), dim, data, IVFOptions{Seed: 3, NProbe: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, ivf) {
		t.Fatal("two builds with the same seed differ")
	}

	good, _ := os.ReadFile(path)
	flatPath := filepath.Join(dir, "e.vx")
	flat := NewFlat(dim)
	_ = flat.Add(data)
	if err := flat.Save(flatPath); err != nil {
		t.Fatal(err)
	}
	oldVersion := bytes.Clone(good)
	oldVersion[6] = 0
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"truncated":   {good[:len(good)-9], "truncated"},
		"padded":      {append(bytes.Clone(good), 0), "trailing bytes"},
		"flipped bit": {flipped, "checksum"},
		"old version": {oldVersion, "unsupported IVF version 0"},
		"garbage":     {[]byte("hello"), "bad magic"},
		"header only": {good[:10], "truncated"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, tc.b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadIVF(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", name, err, p, tc.want)
		}
	}
	// A flat file is never read as IVF, nor the other way round.
	if _, err := LoadIVF(flatPath); err == nil || !strings.Contains(err.Error(), "flat") {
		t.Errorf("LoadIVF of a flat file: %v", err)
	}
	if _, err := Load(path); err == nil {
		t.Error("Load of an IVF file succeeded")
	}
	if _, err := LoadIVF(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file loaded")
	}
}
