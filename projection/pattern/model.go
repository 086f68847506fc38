// Package pattern is stem's embedded default planner: it learns, from
// training questions with gold relation paths and answer counts, which
// relation path and which answer strategy a question needs, the way SGDA
// learns "patterns rather than specific knowledge" (paper section 3.1).
//
// # Method
//
// Training masks each question's entity mention (linking.Mask), merges
// questions whose masked text is the same, and stores per merged example the
// encoder vector of the masked text, the counts of its gold relation paths
// (with directions) and the counts of its strategy labels (Breadth iff more
// than one gold answer). Planning masks the question the same way and finds
// its K nearest examples by a blend of the encoder's cosine similarity and a
// TF-IDF cosine over the masked words (the second signal separates
// templates that differ in one rare word, such as "writer" and "director",
// which sums of word vectors blur). Each neighbour votes for its paths with
// weight exp((sim-best)/T) split over its paths; the top-B paths become
// schema graphs anchored on the question's entity (schema.PathGraph), and the
// strategy is the neighbours' weighted label vote, or, when the planner has a
// KG and the entity, the number of entities the best path reaches there.
//
// Training also fits a path classifier (classifier.go): a fastText-style
// softmax over the training paths whose features are the masked text's
// words, word pairs and triples, and words tagged with their side of and
// distance from the masked entity, plus a learnt projection of the encoder
// vector. Word order around the entity is what tells "the parent of X 's
// son" from "the son of X 's parent", which the vote over bags of words
// cannot. A path's score is (1-w)*(vote share + prototype similarity) +
// w*classifier probability with w = Options.Classifier (0.7, chosen on the
// dev splits: PathQuestion 3-hop dev top-1 80.7 -> 97.8 with the KG, WebQSP
// validation top-1 51.1 -> 57.4).
//
// Training is encoding plus a few seconds of SGD (about half a minute for
// WebQSP's 1,640 paths); it is deterministic for a given Options.Seed.
//
// A model trained on questions synthesized from a KG alone (package
// train/selfsup) records a Prior: it plans beside the compose planner,
// which adds ScorePaths' scores to its own, rather than alone.
package pattern

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

// Example is one training question.
type Example struct {
	Question string
	// Mentions are the spans naming the question's entity, masked before
	// encoding; a MetaQA "[...]" group is masked without being listed.
	Mentions []string
	// Paths are the gold relation paths.
	Paths [][]schema.Step
	// Answers is the number of gold answers; -1 when unknown, which
	// leaves the example out of the strategy vote.
	Answers int
}

// Options are the planning settings stored with a model; zero fields take
// the defaults chosen on dev (see the package tests and the report).
type Options struct {
	// K is the number of neighbours that vote; 0 means DefaultK.
	K int
	// Temperature softens the neighbours' weights exp((sim-best)/T);
	// 0 means DefaultTemperature.
	Temperature float32
	// TFIDF is the weight of the TF-IDF cosine in the blended similarity
	// (1-TFIDF is the encoder's); 0 means DefaultTFIDF, negative means 0.
	TFIDF float32
	// Centroid is the weight of every path's prototype similarity (the
	// cosine between the question and the mean vector of the training
	// questions with that path), added to the vote share so that paths no
	// neighbour voted for are ranked too; 0 means DefaultCentroid,
	// negative means 0.
	Centroid float32
	// Classifier is the weight of the path classifier's probability in a
	// path's score (the neighbour vote and prototype similarity weigh
	// 1-Classifier); 0 means DefaultClassifier, negative means 0 (vote
	// only), 1 or more means the classifier alone.
	Classifier float32
	// Hidden is the classifier's hidden width; 0 means DefaultHidden.
	Hidden int
	// Epochs is the number of passes the classifier is trained for; 0
	// means DefaultEpochs, negative trains no classifier.
	Epochs int
	// LearningRate is the classifier's initial SGD step, decayed linearly
	// to 0; 0 means DefaultLearningRate.
	LearningRate float32
	// Seed fixes the classifier's initial weights and example order.
	Seed uint64
	// Variants is the least Model.Variants score at which a Breadth
	// question's candidate path is read beside the first one, as another
	// way the KG records its fact; 0 means DefaultVariants, negative
	// reads every candidate after the first (no variants).
	Variants float32
}

// Defaults chosen by measurement on the dev splits.
const (
	DefaultK           = 32
	DefaultTemperature = 0.1
	DefaultTFIDF       = 0.3
	DefaultCentroid    = 0.5
	DefaultClassifier  = 0.7
	DefaultHidden      = 64
	// DefaultVariants was chosen on the train half of WebQSP-mini's fixed
	// id split (F1 flat from 0.05 to 0.2 over each question's graph and
	// over the shared KG).
	DefaultVariants = 0.1
	DefaultEpochs   = 20
	// DefaultLearningRate is the classifier's initial SGD step.
	DefaultLearningRate = 0.2
)

func (o Options) withDefaults() Options {
	if o.K <= 0 {
		o.K = DefaultK
	}
	if o.Temperature <= 0 {
		o.Temperature = DefaultTemperature
	}
	if o.TFIDF == 0 {
		o.TFIDF = DefaultTFIDF
	} else if o.TFIDF < 0 {
		o.TFIDF = 0
	}
	if o.Centroid == 0 {
		o.Centroid = DefaultCentroid
	} else if o.Centroid < 0 {
		o.Centroid = 0
	}
	if o.Classifier == 0 {
		o.Classifier = DefaultClassifier
	} else if o.Classifier < 0 {
		o.Classifier = 0
	} else if o.Classifier > 1 {
		o.Classifier = 1
	}
	if o.Hidden <= 0 {
		o.Hidden = DefaultHidden
	}
	if o.Variants == 0 {
		o.Variants = DefaultVariants
	} else if o.Variants < 0 {
		o.Variants = 0
	}
	if o.Epochs == 0 {
		o.Epochs = DefaultEpochs
	}
	if o.LearningRate <= 0 {
		o.LearningRate = DefaultLearningRate
	}
	return o
}

// Path is a relation path with directions, as stored in a model.
type Path []schema.Step

// key identifies a path with its directions.
func (p Path) key() string {
	var b strings.Builder
	for _, s := range p {
		b.WriteString(s.Rel)
		b.WriteByte(byte('0' + s.Dir))
		b.WriteByte(0)
	}
	return b.String()
}

// Model is a trained pattern model. It is read-only after Train or Load and
// safe for concurrent use.
type Model struct {
	f fileModel
	// tf-idf index, rebuilt from the texts on load
	idf   map[string]float32
	post  map[string][]posting
	norms []float32
	rels  map[string]bool
	// centroids are the paths' unit mean question vectors, len(Paths)*Dim.
	centroids []float32
	// featID indexes the classifier's features; classVecs are its paths'
	// effective output vectors (nil without a classifier).
	featID    map[string]int32
	classVecs []float32
	// partID indexes the classifier's path parts, pathID the paths by
	// key; meanBias is the paths' mean bias. An unseen path found in a
	// question's graph is scored by its known parts and meanBias.
	partID   map[string]int32
	pathID   map[string]int32
	meanBias float32
	// maxHops is the longest path of the model; undirected says its
	// paths are all walked either way (WebQSP's), so explored paths are
	// written that way too.
	maxHops    int
	undirected bool
	// gold counts the examples each path is gold for, and cogold the
	// examples two paths are both gold for (key: the pair's ids, lower
	// first), for Variants.
	gold   []float32
	cogold map[[2]int32]float32
	// unmasked says no training text has a masked mention (WebQSP's RoG
	// files name no topic entity): questions are then planned unmasked
	// too, since masking words the model always saw in place only loses
	// them (WebQSP-mini plan top-1 74.87 -> 76.68).
	unmasked bool
}

type posting struct {
	ex int32
	w  float32
}

// fileModel is what a model file holds after its header.
type fileModel struct {
	Encoder string
	Dim     int
	Options Options
	// Texts are the merged examples' masked question texts.
	Texts []string
	// Vectors are their encoder vectors, len(Texts)*Dim.
	Vectors []float32
	// Paths is the table of distinct gold paths.
	Paths []Path
	// ExPaths and ExCounts list each example's path ids and counts.
	ExPaths  [][]int32
	ExCounts [][]float32
	// Breadth and Precision count each example's strategy labels.
	Breadth, Precision []float32
	// Questions is the number of training questions before merging.
	Questions int
	// Classifier is the trained path classifier; nil when trained with
	// negative Epochs.
	Classifier *classifier
	// Prior is set on a model trained from its KG alone (package
	// train/selfsup); zero for one trained from questions. Files written
	// before it existed decode with the zero value.
	Prior Prior
}

// Prior says which zero-shot planner a model plans beside: a model
// trained on questions synthesized from a KG knows the KG's paths and how
// questions are built around them, not the words people use, so its
// scores are added to a zero-shot planner's rather than used alone.
type Prior struct {
	// Planner names the zero-shot planner ("compose"); empty: none, the
	// model plans alone.
	Planner string
	// Weight multiplies the model's path scores (ScorePaths) before they
	// are added to the planner's.
	Weight float32
}

// Train builds a model from examples under enc. Examples without a gold
// path are skipped; none left is an error.
func Train(ctx context.Context, enc models.Encoder, examples []Example, opts Options) (*Model, error) {
	if enc == nil {
		return nil, errors.New("pattern: train: nil encoder")
	}
	f := fileModel{Encoder: enc.Name(), Dim: enc.Dim(), Options: opts}
	byText := map[string]int{}
	pathID := map[string]int32{}
	type raw struct {
		text  int
		paths []int32
	}
	var raws []raw
	for _, ex := range examples {
		if len(ex.Paths) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text := MaskedText(ex.Question, ex.Mentions)
		i, ok := byText[text]
		if !ok {
			i = len(f.Texts)
			byText[text] = i
			f.Texts = append(f.Texts, text)
			f.ExPaths = append(f.ExPaths, nil)
			f.ExCounts = append(f.ExCounts, nil)
			f.Breadth = append(f.Breadth, 0)
			f.Precision = append(f.Precision, 0)
		}
		f.Questions++
		rw := raw{text: i}
		seen := map[int32]bool{}
		for _, p := range ex.Paths {
			if len(p) == 0 {
				continue
			}
			k := Path(p).key()
			id, ok := pathID[k]
			if !ok {
				id = int32(len(f.Paths))
				pathID[k] = id
				f.Paths = append(f.Paths, append(Path(nil), p...))
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			rw.paths = append(rw.paths, id)
			found := false
			for j, q := range f.ExPaths[i] {
				if q == id {
					f.ExCounts[i][j]++
					found = true
				}
			}
			if !found {
				f.ExPaths[i] = append(f.ExPaths[i], id)
				f.ExCounts[i] = append(f.ExCounts[i], 1)
			}
		}
		switch {
		case ex.Answers > 1:
			f.Breadth[i]++
		case ex.Answers >= 0:
			f.Precision[i]++
		}
		if len(rw.paths) > 0 {
			raws = append(raws, rw)
		}
	}
	if len(f.Texts) == 0 {
		return nil, errors.New("pattern: train: no example has a gold path")
	}
	f.Vectors = make([]float32, len(f.Texts)*f.Dim)
	const batch = 512
	for i := 0; i < len(f.Texts); i += batch {
		j := min(i+batch, len(f.Texts))
		if err := enc.Encode(ctx, f.Texts[i:j], f.Vectors[i*f.Dim:j*f.Dim]); err != nil {
			return nil, fmt.Errorf("pattern: train: encode questions: %w", err)
		}
	}
	if o := opts.withDefaults(); o.Epochs > 0 {
		featID := map[string]int32{}
		var feats []string
		textFeats := make([][]int32, len(f.Texts))
		for i, t := range f.Texts {
			for _, s := range features(t) {
				id, ok := featID[s]
				if !ok {
					id = int32(len(feats))
					featID[s] = id
					feats = append(feats, s)
				}
				textFeats[i] = append(textFeats[i], id)
			}
		}
		exs := make([]trainExample, len(raws))
		for i, r := range raws {
			exs[i] = trainExample{feats: textFeats[r.text], vec: f.Vectors[r.text*f.Dim : (r.text+1)*f.Dim], target: r.paths}
		}
		c, err := trainClassifier(f.Paths, exs, len(feats), f.Dim, o)
		if err != nil {
			return nil, err
		}
		f.Classifier = c
		f.Classifier.Feats = feats
	}
	m := &Model{f: f}
	m.index()
	return m, nil
}

// MaskedText is the text the model encodes for a question: the question
// with its mentions masked (linking.Mask), lower-cased.
func MaskedText(question string, mentions []string) string {
	return strings.ToLower(linking.MaskWith(question, mentions, MaskToken))
}

// MaskToken stands for the masked mention, so that word order around it
// survives ("parent of ENT 's son" vs "son of ENT 's parent").
const MaskToken = "ent"

// words are the TF-IDF terms of a masked text: its normalised words and
// word bigrams (bigrams keep some order, which bags of words lose).
func words(text string) []string {
	ws := strings.Fields(kg.Normalize(text))
	out := ws
	for i := 0; i+1 < len(ws); i++ {
		out = append(out, ws[i]+" "+ws[i+1])
	}
	return out
}

// index builds the TF-IDF postings and the relation set.
func (m *Model) index() {
	n := len(m.f.Texts)
	df := map[string]int{}
	tfs := make([]map[string]float32, n)
	m.unmasked = true
	for i, t := range m.f.Texts {
		tf := map[string]float32{}
		for _, w := range words(t) {
			tf[w]++
		}
		if tf[MaskToken] > 0 {
			m.unmasked = false
		}
		tfs[i] = tf
		for w := range tf {
			df[w]++
		}
	}
	m.idf = make(map[string]float32, len(df))
	for w, d := range df {
		m.idf[w] = float32(math.Log(float64(1+n) / float64(1+d)))
	}
	m.post = map[string][]posting{}
	m.norms = make([]float32, n)
	for i, tf := range tfs {
		var s float32
		// Sorted terms: float sums in map order would differ from run to
		// run, and a loaded model must plan exactly as the trained one.
		for _, w := range sortedTerms(tf) {
			c := tf[w]
			x := c * m.idf[w]
			s += x * x
			m.post[w] = append(m.post[w], posting{int32(i), x})
		}
		m.norms[i] = float32(math.Sqrt(float64(s)))
	}
	d := m.f.Dim
	m.centroids = make([]float32, len(m.f.Paths)*d)
	for i, ps := range m.f.ExPaths {
		v := m.f.Vectors[i*d : (i+1)*d]
		for j, id := range ps {
			c := m.centroids[int(id)*d : (int(id)+1)*d]
			for k, x := range v {
				c[k] += m.f.ExCounts[i][j] * x
			}
		}
	}
	for id := range m.f.Paths {
		c := m.centroids[id*d : (id+1)*d]
		var s float32
		for _, x := range c {
			s += x * x
		}
		if s > 0 {
			inv := float32(1 / math.Sqrt(float64(s)))
			for k := range c {
				c[k] *= inv
			}
		}
	}
	if c := m.f.Classifier; c != nil {
		m.featID = make(map[string]int32, len(c.Feats))
		for i, s := range c.Feats {
			m.featID[s] = int32(i)
		}
		m.classVecs = make([]float32, len(m.f.Paths)*c.Hidden)
		c.classVectors(m.classVecs)
		m.partID = make(map[string]int32, len(c.Parts))
		for i, s := range c.Parts {
			m.partID[s] = int32(i)
		}
		for _, b := range c.Bias {
			m.meanBias += b
		}
		if len(c.Bias) > 0 {
			m.meanBias /= float32(len(c.Bias))
		}
	}
	m.gold = make([]float32, len(m.f.Paths))
	m.cogold = map[[2]int32]float32{}
	for _, ps := range m.f.ExPaths {
		for i, a := range ps {
			m.gold[a]++
			for _, b := range ps[i+1:] {
				if a != b {
					m.cogold[[2]int32{min(a, b), max(a, b)}]++
				}
			}
		}
	}
	m.rels = map[string]bool{}
	m.pathID = make(map[string]int32, len(m.f.Paths))
	m.undirected = len(m.f.Paths) > 0
	for i, p := range m.f.Paths {
		m.pathID[p.key()] = int32(i)
		if !isConjunction(p) {
			m.maxHops = max(m.maxHops, len(p))
		}
		for _, s := range p {
			m.rels[s.Rel] = true
			if s.Dir != schema.Either {
				m.undirected = false
			}
		}
	}
}

// Variants reports how strongly two relation paths state one fact, by
// the training questions: the smaller of P(b gold | a gold) and P(a gold |
// b gold) over the examples. Relation variants (a country's
// languages_spoken and a language's countries_spoken_in, or
// official_language) are gold for the same questions and score high; a
// path that connects everything (a person's nationality and back) is gold
// beside many paths but has few of them beside it, so the smaller side is
// low. A path the model never saw scores 0.
func (m *Model) Variants(a, b Path) float32 {
	ia, oka := m.pathID[a.key()]
	ib, okb := m.pathID[b.key()]
	if !oka || !okb || ia == ib {
		return 0
	}
	n := m.cogold[[2]int32{min(ia, ib), max(ia, ib)}]
	if n == 0 {
		return 0
	}
	return min(n/m.gold[ia], n/m.gold[ib])
}

// Examples is the number of merged examples; Questions the number of
// training questions behind them.
func (m *Model) Examples() int  { return len(m.f.Texts) }
func (m *Model) Questions() int { return m.f.Questions }

// NumPaths is the number of distinct relation paths the model can plan.
func (m *Model) NumPaths() int { return len(m.f.Paths) }

// Encoder is the name of the encoder the model was trained with.
func (m *Model) Encoder() string { return m.f.Encoder }

// Options are the model's stored planning settings.
func (m *Model) Options() Options { return m.f.Options }

// Prior is the zero-shot planner the model plans beside (zero: none).
func (m *Model) Prior() Prior { return m.f.Prior }

// SetPrior records the zero-shot planner the model plans beside; call it
// before Save and before the model is shared.
func (m *Model) SetPrior(p Prior) { m.f.Prior = p }

// Model files: magic, version, payload length, CRC-32 of the payload, then
// the gob-encoded fileModel.
const (
	magic = "STEMPAT\x00"
	// Version is the model file format version this package writes; 2
	// added the path classifier.
	Version    = 2
	headerSize = len(magic) + 4 + 8 + 4
)

// Errors a model file can fail with; Load wraps them with the path.
var (
	ErrNotModel        = errors.New("not a stem pattern model file")
	ErrNewerVersion    = errors.New("pattern model file written by a newer stem")
	ErrOldVersion      = errors.New("pattern model file written by an older stem; retrain it with `stem train planner`")
	ErrCorrupt         = errors.New("corrupt or truncated pattern model file")
	ErrEncoderMismatch = errors.New("pattern model was trained with another encoder")
	// ErrOtherKG says a model's relation paths name no relation of the KG
	// it is asked to plan over: it was trained for another KG.
	ErrOtherKG = errors.New("pattern model was trained for another KG")
)

// Save writes the model to path atomically.
func (m *Model) Save(path string) error {
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(&m.f); err != nil {
		return fmt.Errorf("pattern: save %s: %w", path, err)
	}
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		var h [headerSize]byte
		copy(h[:], magic)
		binary.LittleEndian.PutUint32(h[8:], Version)
		binary.LittleEndian.PutUint64(h[12:], uint64(payload.Len()))
		binary.LittleEndian.PutUint32(h[20:], crc32.ChecksumIEEE(payload.Bytes()))
		if _, err := w.Write(h[:]); err != nil {
			return err
		}
		_, err := w.Write(payload.Bytes())
		return err
	})
	if err != nil {
		return fmt.Errorf("pattern: save %s: %w", path, err)
	}
	return nil
}

// Load reads a model file and checks it was trained with enc (same name
// and dimension); enc nil skips the check.
func Load(path string, enc models.Encoder) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pattern: load model: %w", err)
	}
	m, err := Decode(data, enc)
	if err != nil {
		return nil, fmt.Errorf("pattern: load %s: %w", path, err)
	}
	return m, nil
}

// Decode reads a model from the bytes of a model file; see Load.
func Decode(data []byte, enc models.Encoder) (*Model, error) {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, ErrNotModel
	}
	if len(data) < headerSize {
		return nil, fmt.Errorf("%w: header cut short (%d bytes)", ErrCorrupt, len(data))
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v > Version {
		return nil, fmt.Errorf("%w: file version %d, this build reads up to %d", ErrNewerVersion, v, Version)
	} else if v == 0 {
		return nil, fmt.Errorf("%w: version 0", ErrCorrupt)
	} else if v < Version {
		return nil, fmt.Errorf("%w: file version %d, this build reads %d", ErrOldVersion, v, Version)
	}
	n := binary.LittleEndian.Uint64(data[12:])
	body := data[headerSize:]
	if uint64(len(body)) != n {
		return nil, fmt.Errorf("%w: payload is %d bytes, header says %d", ErrCorrupt, len(body), n)
	}
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[20:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	var f fileModel
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	k := len(f.Texts)
	if f.Dim <= 0 || len(f.Vectors) != k*f.Dim || len(f.ExPaths) != k || len(f.ExCounts) != k || len(f.Breadth) != k || len(f.Precision) != k {
		return nil, fmt.Errorf("%w: inconsistent sizes", ErrCorrupt)
	}
	for i, ps := range f.ExPaths {
		if len(f.ExCounts[i]) != len(ps) {
			return nil, fmt.Errorf("%w: inconsistent sizes", ErrCorrupt)
		}
		for _, p := range ps {
			if p < 0 || int(p) >= len(f.Paths) {
				return nil, fmt.Errorf("%w: path id %d out of range", ErrCorrupt, p)
			}
		}
	}
	if c := f.Classifier; c != nil {
		h, np := c.Hidden, len(f.Paths)
		if h <= 0 || len(c.In) != len(c.Feats)*h || len(c.Proj) != h*f.Dim || len(c.Out) != np*h || len(c.Bias) != np ||
			len(c.PartVec) != len(c.Parts)*h || len(c.PathParts) != np {
			return nil, fmt.Errorf("%w: inconsistent classifier sizes", ErrCorrupt)
		}
		for _, ps := range c.PathParts {
			for _, p := range ps {
				if p < 0 || int(p) >= len(c.Parts) {
					return nil, fmt.Errorf("%w: path part id %d out of range", ErrCorrupt, p)
				}
			}
		}
	}
	if enc != nil && (enc.Name() != f.Encoder || enc.Dim() != f.Dim) {
		return nil, fmt.Errorf("%w: model has %s (dim %d), given %s (dim %d)", ErrEncoderMismatch, f.Encoder, f.Dim, enc.Name(), enc.Dim())
	}
	m := &Model{f: f}
	m.index()
	return m, nil
}

// sortedTerms returns tf's terms in order, for sums that do not depend on map
// iteration order.
func sortedTerms(tf map[string]float32) []string {
	ws := make([]string, 0, len(tf))
	for w := range tf {
		ws = append(ws, w)
	}
	slices.Sort(ws)
	return ws
}

// EachExample calls fn with each merged training example's question text
// (masked as the model stores it) and the relations of its gold paths,
// each relation once: what a reading's relations are weighed against
// the words of the questions they answered (selection.PathFit).
func (m *Model) EachExample(fn func(text string, rels []string)) {
	for i, t := range m.f.Texts {
		var rels []string
		for _, id := range m.f.ExPaths[i] {
			for _, s := range m.f.Paths[id] {
				if !slices.Contains(rels, s.Rel) {
					rels = append(rels, s.Rel)
				}
			}
		}
		fn(t, rels)
	}
}
