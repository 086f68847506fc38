package tripgnn

import (
	"context"
	"crypto/sha256"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const testDim = 8

// randVecs returns n unit vectors of dimension d.
func randVecs(rng *rand.Rand, n, d int) []float32 {
	v := make([]float32, n*d)
	for i := range n {
		var s float64
		for j := range d {
			x := rng.NormFloat64()
			v[i*d+j] = float32(x)
			s += x * x
		}
		for j := range d {
			v[i*d+j] /= float32(math.Sqrt(s))
		}
	}
	return v
}

// toyExample is a graph where the question entity 0 has some neighbours
// by relation 0 (the answers, label 1) and some by relations 1 and 2,
// including incoming edges, plus random edges among the others. relVecs
// and the schema vector are shared across examples so that "follow
// relation 0" is learnable.
func toyExample(rng *rand.Rand, relVecs, schema []float32) *Example {
	n := 12 + rng.IntN(12)
	ex := &Example{NumEntities: n, RelVecs: relVecs, SchemaVecs: schema, Question: []int32{0}, Labels: make([]float32, n)}
	add := func(h, r, t int32) {
		ex.Heads, ex.Rels, ex.Tails = append(ex.Heads, h), append(ex.Rels, r), append(ex.Tails, t)
	}
	perm := rng.Perm(n - 1)
	nAns, nDis := 1+rng.IntN(3), 2+rng.IntN(4)
	for i := range nAns {
		e := int32(perm[i] + 1)
		add(0, 0, e)
		ex.Labels[e] = 1
	}
	for i := nAns; i < nAns+nDis; i++ {
		e := int32(perm[i] + 1)
		if rng.IntN(2) == 0 {
			add(0, int32(1+rng.IntN(2)), e)
		} else {
			add(e, int32(rng.IntN(3)), 0) // incoming: not "reachable by relation 0"
		}
	}
	for range n {
		a, b := int32(1+rng.IntN(n-1)), int32(1+rng.IntN(n-1))
		add(a, int32(rng.IntN(3)), b)
	}
	ex.Labels[0] = 1
	return ex
}

func toyData(seed uint64, count int) []*Example {
	fixed := rand.New(rand.NewPCG(0, 1))
	rel := randVecs(fixed, 6, testDim) // 3 relations + 3 inverses
	schema := append(append(randVecs(fixed, 1, testDim), rel[:testDim]...), make([]float32, testDim)...)
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]*Example, count)
	for i := range out {
		out[i] = toyExample(rng, rel, schema)
	}
	return out
}

func newTest(t testing.TB, cfg Config) *Model {
	t.Helper()
	if cfg.EncoderDim == 0 {
		cfg.EncoderDim = testDim
	}
	if cfg.EncoderName == "" {
		cfg.EncoderName = "test-enc"
	}
	if cfg.Width == 0 {
		cfg.Width = 16
	}
	if cfg.Layers == 0 {
		cfg.Layers = 2
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPredictShape(t *testing.T) {
	m := newTest(t, Config{})
	for _, ex := range toyData(1, 3) {
		p, err := m.Predict(context.Background(), ex)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != ex.NumEntities {
			t.Fatalf("got %d probabilities for %d entities", len(p), ex.NumEntities)
		}
		for i, x := range p {
			if !(x > 0 && x < 1) {
				t.Fatalf("probability %d = %v", i, x)
			}
		}
	}
	// e=8, d=16, L=2: triple 3ed+d, relation ed+d, per layer 2(d^2+d) +
	// 2d^2+d + 2d, readout d+1.
	e, d := 8, 16
	want := 3*e*d + d + e*d + d + 2*(2*(d*d+d)+2*d*d+d+2*d) + d + 1
	if got := m.NumParams(); got != want {
		t.Fatalf("NumParams = %d, want %d", got, want)
	}
}

func TestLearnsRelationFromQuestion(t *testing.T) {
	ctx := context.Background()
	train, test := toyData(2, 64), toyData(3, 20)
	m := newTest(t, Config{Width: 32, Layers: 2, LR: 5e-3, Seed: 7})
	var first, last float32
	const steps = 100
	for s := range steps {
		batch := []*Example{train[(4*s)%64], train[(4*s+1)%64], train[(4*s+2)%64], train[(4*s+3)%64]}
		loss, err := m.TrainStep(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		if s < 5 {
			first += loss / 5
		}
		if s >= steps-5 {
			last += loss / 5
		}
	}
	t.Logf("loss %.4f -> %.4f", first, last)
	if last > first/5 {
		t.Errorf("loss fell only from %.4f to %.4f over %d steps", first, last, steps)
	}
	// On unseen graphs every gold entity must outrank every other one.
	good := 0
	for _, ex := range test {
		p, err := m.Predict(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		minPos, maxNeg := float32(2), float32(-1)
		for i, y := range ex.Labels {
			if y == 1 {
				minPos = min(minPos, p[i])
			} else {
				maxNeg = max(maxNeg, p[i])
			}
		}
		if minPos > maxNeg {
			good++
		}
	}
	if good < len(test)*9/10 {
		t.Errorf("gold entities ranked first in %d of %d unseen graphs", good, len(test))
	}
}

// Information must reach the head of an edge from its tail, through the
// inverse edge the model adds.
func TestInverseEdgesCarryInformation(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	rel := randVecs(rng, 2, testDim)
	schema := randVecs(rng, 3, testDim)
	m := newTest(t, Config{Seed: 3})
	// Entity 1 -r-> 0 (the question); entity 2 is isolated.
	ex := &Example{NumEntities: 3, Heads: []int32{1}, Rels: []int32{0}, Tails: []int32{0},
		RelVecs: rel, SchemaVecs: schema, Question: []int32{0}}
	p, err := m.Predict(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(p[1]-p[2])) < 1e-4 {
		t.Errorf("head of an edge into the question entity scores %v, same as an isolated entity %v", p[1], p[2])
	}
	// Remove the edge: now 1 and 2 are alike.
	ex.Heads, ex.Rels, ex.Tails = nil, nil, nil
	p, err = m.Predict(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	if p[1] != p[2] {
		t.Errorf("two isolated entities score %v and %v", p[1], p[2])
	}
}

// Padding to shape buckets and joining graphs must not change a graph's
// scores: Predict on one graph equals its slice of a batch forward.
func TestPaddingAndBatchingInvariance(t *testing.T) {
	data := toyData(5, 3)
	m := newTest(t, Config{Seed: 9})
	ctx := context.Background()
	alone, err := m.Predict(ctx, data[1])
	if err != nil {
		t.Fatal(err)
	}
	p, err := pack(data, packing{testDim, true, false})
	if err != nil {
		t.Fatal(err)
	}
	logits := m.nativeForward(p, false).logits
	for i, q := range alone {
		x := logits[p.off[1]+i]
		want := float32(1 / (1 + math.Exp(-float64(x))))
		if math.Abs(float64(q-want)) > 1e-5 {
			t.Fatalf("entity %d: alone %v, in a batch %v", i, q, want)
		}
	}
}

func TestDeterminism(t *testing.T) {
	data := toyData(6, 8)
	ctx := context.Background()
	run := func(seed uint64) (*Model, []float32) {
		m := newTest(t, Config{Seed: seed})
		for s := range 3 {
			if _, err := m.TrainStep(ctx, data[2*s:2*s+2]); err != nil {
				t.Fatal(err)
			}
		}
		p, err := m.Predict(ctx, data[7])
		if err != nil {
			t.Fatal(err)
		}
		return m, p
	}
	a, pa := run(11)
	b, pb := run(11)
	for i := range a.params {
		if !slices.Equal(a.params[i].data, b.params[i].data) {
			t.Fatalf("parameter %s differs between two runs with the same seed", a.params[i].name)
		}
	}
	if !slices.Equal(pa, pb) {
		t.Fatalf("predictions differ: %v vs %v", pa, pb)
	}
	c, _ := run(12)
	if slices.Equal(a.params[0].data, c.params[0].data) {
		t.Fatal("seeds 11 and 12 gave the same weights")
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	data := toyData(8, 4)
	ctx := context.Background()
	m := newTest(t, Config{Seed: 5, LossMix: 0.7, WeightDecay: 0.01})
	if _, err := m.TrainStep(ctx, data[:2]); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gnn.ckpt")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path, "test-enc", testDim)
	if err != nil {
		t.Fatal(err)
	}
	if l.Config() != m.Config() {
		t.Fatalf("config %+v, want %+v", l.Config(), m.Config())
	}
	for _, ex := range data {
		p1, err := m.Predict(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := l.Predict(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p1, p2) {
			t.Fatalf("predictions differ after reload: %v vs %v", p1, p2)
		}
	}
}

func TestCheckpointErrors(t *testing.T) {
	dir := t.TempDir()
	m := newTest(t, Config{Seed: 5})
	path := filepath.Join(dir, "gnn.ckpt")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damagedVersion := slices.Clone(good)
	damagedVersion[8] = 99
	// A genuinely newer file keeps a valid checksum.
	newer := slices.Clone(good)
	newer[8] = 99
	sum := sha256.Sum256(newer[:len(newer)-sha256.Size])
	copy(newer[len(newer)-sha256.Size:], sum[:])
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 1
	cases := []struct {
		name    string
		data    []byte
		encName string
		encDim  int
		want    string
	}{
		{"other encoder", good, "other-enc", testDim, "trained on encoder"},
		{"other dim", good, "test-enc", 16, "trained on encoder"},
		{"truncated", good[:len(good)-100], "test-enc", testDim, "checksum"},
		{"tiny", good[:20], "test-enc", testDim, "not a Triple-GNN checkpoint"},
		{"bit flip", flipped, "test-enc", testDim, "checksum"},
		{"newer", newer, "test-enc", testDim, "newer"},
		{"damaged version byte", damagedVersion, "test-enc", testDim, "checksum mismatch"},
		{"empty", nil, "test-enc", testDim, "not a Triple-GNN checkpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p, c.encName, c.encDim)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
	// A save that fails leaves the good checkpoint in place.
	bad := filepath.Join(dir, "missing-dir", "x.ckpt")
	if err := m.Save(bad); err == nil {
		t.Fatal("save into a missing directory succeeded")
	}
	if _, err := Load(path, "test-enc", testDim); err != nil {
		t.Fatal(err)
	}
}

func TestBadExamples(t *testing.T) {
	m := newTest(t, Config{})
	base := toyData(9, 1)[0]
	mod := func(f func(e *Example)) *Example {
		e := *base
		e.Heads, e.Rels, e.Tails = slices.Clone(base.Heads), slices.Clone(base.Rels), slices.Clone(base.Tails)
		e.RelVecs, e.SchemaVecs = slices.Clone(base.RelVecs), slices.Clone(base.SchemaVecs)
		e.Labels = slices.Clone(base.Labels)
		f(&e)
		return &e
	}
	cases := []struct {
		name string
		ex   *Example
		want string
	}{
		{"nil", nil, "nil example"},
		{"empty", mod(func(e *Example) { e.NumEntities = 0 }), "empty graph"},
		{"no question", mod(func(e *Example) { e.Question = nil }), "no question entity"},
		{"question out of range", mod(func(e *Example) { e.Question = []int32{int32(e.NumEntities)} }), "question entity"},
		{"rel dim", mod(func(e *Example) { e.RelVecs = e.RelVecs[:len(e.RelVecs)-1] }), "RelVecs"},
		{"schema dim", mod(func(e *Example) { e.SchemaVecs = e.SchemaVecs[:2*testDim] }), "SchemaVecs"},
		{"no schema", mod(func(e *Example) { e.SchemaVecs = nil }), "SchemaVecs"},
		{"edge out of range", mod(func(e *Example) { e.Tails[0] = -1 }), "entity id"},
		{"relation out of range", mod(func(e *Example) { e.Rels[0] = 3 }), "relation id"},
		{"ragged edges", mod(func(e *Example) { e.Rels = e.Rels[1:] }), "differ in length"},
		{"labels length", mod(func(e *Example) { e.Labels = e.Labels[1:] }), "labels for"},
		{"label value", mod(func(e *Example) { e.Labels[0] = 2 }), "label 0"},
		{"NaN feature", mod(func(e *Example) { e.SchemaVecs[3] = float32(math.NaN()) }), "is NaN"},
		{"Inf relation", mod(func(e *Example) { e.RelVecs[5] = float32(math.Inf(1)) }), "RelVecs[5]"},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := m.TrainStep(ctx, []*Example{base, c.ex})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("TrainStep: got %v, want an error containing %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "example 1") {
				t.Errorf("error %q does not name the example", err)
			}
		})
	}
	if _, err := m.TrainStep(ctx, nil); err == nil {
		t.Error("empty batch accepted")
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without EncoderDim succeeded")
	}
}

// A NaN that gets past input checks (here: in the weights) must stop
// training and prediction with an error and leave the weights untouched.
func TestNaNIsAnError(t *testing.T) {
	m := newTest(t, Config{Seed: 1})
	data := toyData(10, 2)
	m.params[0].data[0] = float32(math.NaN())
	m.ref.stale()
	before := slices.Clone(m.params[2].data)
	if _, err := m.TrainStep(context.Background(), data); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("TrainStep: got %v, want a NaN error", err)
	}
	if !slices.Equal(before, m.params[2].data) {
		t.Error("weights changed by a failed step")
	}
	if _, err := m.Predict(context.Background(), data[0]); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Fatalf("Predict: got %v, want a NaN error", err)
	}
}

func TestBucket(t *testing.T) {
	for _, c := range []struct{ n, lo, want int }{
		{1, 16, 16}, {16, 16, 16}, {17, 16, 18}, {2000, 16, 2048}, {18000, 16, 18432}, {1025, 16, 1152},
	} {
		if got := bucket(c.n, c.lo); got != c.want {
			t.Errorf("bucket(%d, %d) = %d, want %d", c.n, c.lo, got, c.want)
		}
	}
	for n := 1; n < 5000; n++ {
		b := bucket(n, 1)
		if b < n || float64(b) > float64(n)*1.125+1 {
			t.Fatalf("bucket(%d) = %d", n, b)
		}
	}
}

func TestParamLayoutNames(t *testing.T) {
	m, err := New(Config{EncoderName: "t", EncoderDim: testDim, Layers: 3, Width: 8})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{pTripleW: "triple/w", pTripleB: "triple/b", pRelW: "rel/w", pRelB: "rel/b",
		layerBase(2) + lRel1W: "layer2/rel1/w", layerBase(1) + lUpdW: "layer1/upd/w", layerBase(0) + lLNGain: "layer0/ln/gain",
		layerBase(2) + lLNBias: "layer2/ln/bias", readout(3) + oW: "out/w", readout(3) + oB: "out/b"}
	for i, name := range want {
		if got := m.params[i].name; got != name {
			t.Errorf("params[%d] = %s, want %s", i, got, name)
		}
	}
	if n := len(m.params); n != readout(3)+oB+1 {
		t.Errorf("%d parameters, want %d", n, readout(3)+oB+1)
	}
}
