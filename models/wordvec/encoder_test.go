package wordvec

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/models"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"location.location.nearby_airports", []string{"location", "location", "nearby", "airports"}},
		{"__people__person__gender", []string{"people", "person", "gender"}},
		{"birthPlace", []string{"birth", "place"}},
		{"HTMLParser", []string{"html", "parser"}},
		{"isPartOf", []string{"is", "part", "of"}},
		{"Ljubljana_Zoo", []string{"ljubljana", "zoo"}},
		{"m.0abc", []string{"m", "0abc"}},
		{"Summer of '42", []string{"summer", "of", "42"}},
		{"release_year 1952", []string{"release", "year", "1952"}},
		{"mp3Player", []string{"mp3", "player"}},
		{"film/film-director", []string{"film", "film", "director"}},
		{"Grégoire Colin", []string{"grégoire", "colin"}},
		{"ÉCOLE normale", []string{"école", "normale"}},
		{"  \t", nil},
		{"", nil},
		{"?!--//", nil},
		{"a", []string{"a"}},
	}
	for _, tt := range tests {
		got := Tokens(tt.in)
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// testVectors is a small vocabulary with made directions: film words lie
// near one axis, place words near another, function words near neither.
func testVectors(t testing.TB) *Vectors {
	t.Helper()
	words := []string{"the", "film", "director", "directed", "by", "release", "year", "airport", "nearby", "city"}
	topic := []int{0, 1, 1, 1, 0, 1, 0, 2, 2, 2}
	dim := 8
	rng := rand.New(rand.NewPCG(1, 2))
	m := make([]float32, len(words)*dim)
	for i := range m {
		m[i] = 0.3 * float32(rng.NormFloat64())
	}
	for i, k := range topic {
		if k > 0 {
			m[i*dim+k] += 2
		}
	}
	v, err := NewVectors(words, dim, m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func encode(t testing.TB, e models.Encoder, texts ...string) [][]float32 {
	t.Helper()
	flat, err := models.EncodeAll(context.Background(), e, texts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = flat[i*e.Dim() : (i+1)*e.Dim()]
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestEncodeAdditive(t *testing.T) {
	v := testVectors(t)
	for _, opts := range []Options{{}, {NGramDims: -1}, {NGramDims: 16, NGramWeight: 2}, {SIF: 1e-3}} {
		e := New(v, opts)
		groups := [][]string{
			{"film", "directed_by", "Ljubljana_Zoo"},
			{"m.0abc", "nearby airport", "the city"},
			{"release year", "", "birthPlace"},
			{"?", "unknownword", "director"},
		}
		for _, g := range groups {
			parts := make([]float32, len(g)*e.Dim())
			if err := e.EncodeParts(context.Background(), g, parts); err != nil {
				t.Fatal(err)
			}
			sum := make([]float32, e.Dim())
			for i := range g {
				axpy(sum, parts[i*e.Dim():(i+1)*e.Dim()], 1)
			}
			models.Normalize(sum)
			joined := encode(t, e, strings.Join(g, " "))[0]
			for k := range sum {
				if math.Abs(float64(sum[k]-joined[k])) > 1e-5 {
					t.Fatalf("%s: Normalize(parts of %q) differs from Encode of the joined text at %d: %v vs %v", e.Name(), g, k, sum[k], joined[k])
				}
			}
			if n := norm(joined); math.Abs(n-1) > 1e-5 {
				t.Errorf("%s: |Encode(%q)| = %v, want 1", e.Name(), strings.Join(g, " "), n)
			}
		}
	}
}

func TestEncodeZeroForNoTokens(t *testing.T) {
	e := New(testVectors(t), Options{})
	for i, vec := range encode(t, e, "", "  ", "?!.", "film") {
		want := 0.0
		if i == 3 {
			want = 1
		}
		if n := norm(vec); math.Abs(n-want) > 1e-6 {
			t.Errorf("text %d: norm %v, want %v", i, n, want)
		}
	}
}

func TestEncodeSimilarity(t *testing.T) {
	e := New(testVectors(t), Options{})
	v := encode(t, e, "Ljubljana_Zoo", "ljubljana zoo", "LjubljanaZoo", "m.0abc", "m.0abd", "m.9xyz", "directed_by", "film director", "nearby airport")
	if c := models.Cosine(v[0], v[1]); math.Abs(float64(c)-1) > 1e-6 {
		t.Errorf("cos(Ljubljana_Zoo, ljubljana zoo) = %v, want 1", c)
	}
	if c := models.Cosine(v[0], v[2]); math.Abs(float64(c)-1) > 1e-6 {
		t.Errorf("cos(Ljubljana_Zoo, LjubljanaZoo) = %v, want 1 (camelCase split)", c)
	}
	if near, far := models.Cosine(v[3], v[4]), models.Cosine(v[3], v[5]); near <= far {
		t.Errorf("cos(m.0abc, m.0abd) = %v not above cos(m.0abc, m.9xyz) = %v", near, far)
	}
	if near, far := models.Cosine(v[6], v[7]), models.Cosine(v[6], v[8]); near <= far {
		t.Errorf("cos(directed_by, film director) = %v not above cos(directed_by, nearby airport) = %v", near, far)
	}
}

func TestEncoderShape(t *testing.T) {
	v := testVectors(t)
	tests := []struct {
		v    *Vectors
		opts Options
		dim  int
		name string
	}{
		{v, Options{}, 8 + DefaultNGramDims, "wordvec:" + v.ID() + "+ng128w1+sif0.001"},
		{v, Options{NGramDims: -1, SIF: -1}, 8, "wordvec:" + v.ID() + "+ng0"},
		{v, Options{NGramDims: 32, NGramWeight: 1.5, SIF: 1e-4}, 40, "wordvec:" + v.ID() + "+ng32w1.5+sif0.0001"},
		{nil, Options{}, DefaultNGramDims, "wordvec:none+ng128w1"},
		{nil, Options{NGramDims: -1}, DefaultNGramDims, "wordvec:none+ng128w1"},
	}
	for _, tt := range tests {
		e := New(tt.v, tt.opts)
		if e.Dim() != tt.dim || e.Name() != tt.name {
			t.Errorf("New(%v): Dim %d Name %q, want %d %q", tt.opts, e.Dim(), e.Name(), tt.dim, tt.name)
		}
	}
	// Different vectors, different names.
	w := testVectors(t)
	w2, err := NewVectors([]string{"film"}, 8, w.Row(1)[:8:8])
	if err != nil {
		t.Fatal(err)
	}
	if New(w, Options{}).Name() == New(w2, Options{}).Name() {
		t.Error("encoders over different vectors share a name")
	}
}

func TestEncodeErrors(t *testing.T) {
	e := New(testVectors(t), Options{})
	err := e.Encode(context.Background(), []string{"a", "b"}, make([]float32, e.Dim()))
	if err == nil || !strings.Contains(err.Error(), "destination holds") {
		t.Errorf("short dst: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	texts := make([]string, 2000)
	err = e.Encode(ctx, texts, make([]float32, len(texts)*e.Dim()))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

// TestEncodeParallel checks that the split batch path gives the serial
// results, and (under -race) that concurrent calls do not share buffers.
func TestEncodeParallel(t *testing.T) {
	e := New(testVectors(t), Options{})
	texts := make([]string, 3000)
	for i := range texts {
		texts[i] = []string{"film director", "m.0abc", "nearby_airports", "Ljubljana Zoo", "releaseYear"}[i%5] + strings.Repeat("x", i%7)
	}
	want := make([]float32, len(texts)*e.Dim())
	if err := e.serial(context.Background(), texts, want, true); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got := make([]float32, len(texts)*e.Dim())
			if err := e.Encode(context.Background(), texts, got); err != nil {
				t.Error(err)
				return
			}
			if !slices.Equal(got, want) {
				t.Error("parallel Encode differs from serial encoding")
			}
		})
	}
	wg.Wait()
}

func TestEncodeNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	e := New(testVectors(t), Options{})
	texts := []string{"location.location.nearby_airports", "Ljubljana_Zoo", "directed by"}
	dst := make([]float32, len(texts)*e.Dim())
	e.Encode(context.Background(), texts, dst) // warm the pool
	allocs := testing.AllocsPerRun(100, func() {
		e.Encode(context.Background(), texts, dst)
	})
	if allocs > 0 {
		t.Errorf("Encode of a small batch: %v allocations per call, want 0", allocs)
	}
}
