package wordnet

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/npmpkg"
	"github.com/stem-kgqa/stem/models/wordvec"
)

// miniature parses testdata's miniature WordNet: a person, relatives,
// parents and children, a sex that is a gender and one that is not, causes
// and a causal agent (every person is one), spouses and a named wife,
// occupations.
func miniature(t testing.TB) *Lexicon {
	t.Helper()
	ix, err := os.Open(filepath.Join("testdata", "index.noun"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	da, err := os.Open(filepath.Join("testdata", "data.noun"))
	if err != nil {
		t.Fatal(err)
	}
	defer da.Close()
	l, err := Parse(ix, da, "miniature", "licence text")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRelated(t *testing.T) {
	l := miniature(t)
	if l.Lemmas() != 32 || l.Synsets() != 22 {
		t.Fatalf("Lemmas %d Synsets %d, want 32 22", l.Lemmas(), l.Synsets())
	}
	for _, tt := range []struct {
		word, rel string
		want      float32
	}{
		{"kid", "children", 1},         // a shared sense, "children" read as "child"
		{"sex", "gender", 1},           // sex's fourth sense is gender's first
		{"wife", "spouse", 0.9},        // a kind of spouse
		{"wives", "spouse", 0.9},       // irregular plural
		{"father", "parents", 0.9},     // a kind of parent
		{"dad", "parents", 0.8},        // a father, a parent
		{"son", "children", 0.8},       // a male offspring, a child
		{"sons", "children", 0.8},      // regular plural
		{"job", "profession", 0.9},     // a profession is a kind of job
		{"person", "cause", 0},         // a causal agent, cause's third sense
		{"child", "cause", 0},          // nor through a person
		{"bathsheba", "wife", 0},       // an instance names no kind
		{"parents", "children", 0},     // relatives, not kinds of each other
		{"gender", "sex", 0},           // gender is not among sex's two first senses
		{"nobody", "spouse", 0},        // unknown word
		{"spouse", "nothing", 0},       // unknown relation word
		{"Spouse", "partner", 1},       // case
		{"relative", "relative", 1},    // the same word
		{"offspring", "children", 0.9}, // children are a kind of offspring
	} {
		if got := l.Related(tt.word, tt.rel); got != tt.want {
			t.Errorf("Related(%q, %q) = %v, want %v", tt.word, tt.rel, got, tt.want)
		}
	}
}

func TestNarrower(t *testing.T) {
	l := miniature(t)
	for _, tt := range []struct {
		rel  string
		want []string
	}{
		{"children", []string{"boy", "kid", "son", "youngster"}},
		{"parents", []string{"dad", "daddy", "father"}},
		{"spouse", []string{"partner", "wife"}},
		{"nothing", nil},
	} {
		if got := l.Narrower(tt.rel); !slices.Equal(got, tt.want) {
			t.Errorf("Narrower(%q) = %q, want %q", tt.rel, got, tt.want)
		}
	}
}

func TestInstanceKinds(t *testing.T) {
	l := miniature(t)
	for _, tt := range []struct {
		name string
		want [][]string
	}{
		// An instance of a wife, a kind of spouse, a kind of relative, a
		// person, a causal agent, an entity.
		{"Bathsheba", [][]string{{"wife"}, {"partner", "spouse"}, {"relative"}, {"individual", "person"}, {"causal_agent", "cause"}, {"entity"}}},
		{"bathsheba", [][]string{{"wife"}, {"partner", "spouse"}, {"relative"}, {"individual", "person"}, {"causal_agent", "cause"}, {"entity"}}},
		{"wife", nil},   // a kind, no instance
		{"nobody", nil}, // unknown
		{"sex_", nil},   // not a lemma
		{"person", nil}, // a kind of causal agent, not an instance of one
		{"", nil},
	} {
		if got := l.InstanceKinds(tt.name); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("InstanceKinds(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLemmaID spells names as lemmas as strings.ToLower over the words
// joined by '_' does, on the stack or, past 64 bytes or ASCII, by that
// rule itself.
func TestLemmaID(t *testing.T) {
	l := miniature(t)
	long := strings.Repeat("a", 70)
	l.index[long] = 7
	l.index["causal_agent"] = 8
	l.index["élan_vital"] = 9
	for _, tt := range []struct {
		name string
		id   int32
		ok   bool
	}{
		{"Causal Agent", 8, true},
		{"  causal__ agent_ ", 8, true},
		{"_CAUSAL_AGENT", 8, true},
		{"causalagent", 0, false},
		{"causal agent x", 0, false},
		{long, 7, true},
		{strings.ToUpper(long), 7, true},
		{"Élan Vital", 9, true},
		{"", 0, false},
		{"  ", 0, false},
	} {
		id, ok := l.lemmaID(tt.name)
		if ok != tt.ok || ok && id != tt.id {
			t.Errorf("lemmaID(%q) = %d, %v, want %d, %v", tt.name, id, ok, tt.id, tt.ok)
		}
	}
}

func TestSaveOpen(t *testing.T) {
	l := miniature(t)
	path := filepath.Join(t.TempDir(), "m.stemlex")
	if err := l.Save(path); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Source() != "miniature" || m.License() != "licence text" || m.Related("son", "children") != 0.8 {
		t.Errorf("reopened: source %q licence %q son/children %v", m.Source(), m.License(), m.Related("son", "children"))
	}
	data, _ := os.ReadFile(path)
	for _, tt := range []struct {
		name string
		data []byte
		want error
	}{
		{"not a lexicon", []byte("hello world, not a lexicon"), ErrNotLexicon},
		{"short header", data[:10], ErrCorrupt},
		{"truncated", data[:len(data)-3], ErrCorrupt},
		{"flipped byte", append(slices.Clone(data[:len(data)-1]), data[len(data)-1]^1), ErrCorrupt},
		{"other version", resum(append(append(slices.Clone(data[:8]), 9, 0, 0, 0), data[12:len(data)-sha256.Size]...)), ErrVersion},
	} {
		p := filepath.Join(t.TempDir(), "bad")
		os.WriteFile(p, tt.data, 0o644)
		if _, err := Open(p); !errors.Is(err, tt.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v, want %v naming the file", tt.name, err, tt.want)
		}
	}
}

// resum appends the checksum a lexicon file ends with.
func resum(body []byte) []byte {
	sum := sha256.Sum256(body)
	return append(body, sum[:]...)
}

func TestParseErrors(t *testing.T) {
	data, _ := os.ReadFile(filepath.Join("testdata", "data.noun"))
	index, _ := os.ReadFile(filepath.Join("testdata", "index.noun"))
	for _, tt := range []struct {
		name, index, data, want string
	}{
		{"bad word count", string(index), "00000001 03 n zz entity 0 000 | x\n", "data.noun:1: bad word count zz"},
		{"words past the line", string(index), "00000001 03 n 05 entity 0\n", "data.noun:1: words run past the line"},
		{"bad pointer count", string(index), "00000001 03 n 01 entity 0 009 @ 00000002 n 0000\n", "data.noun:1: bad pointer count 009"},
		{"dangling hypernym", "entity n 1 0 1 0 00000001\n", "00000001 03 n 01 entity 0 001 @ 00000099 n 0000 | x\n", "hypernym 00000099"},
		{"unknown synset", "entity n 1 0 1 0 00000042\n", string(data), "index.noun:1: synset 00000042 is not in data.noun"},
		{"bad sense count", "entity n x 0 1 0 00000001\n", string(data), "index.noun:1: bad sense count x"},
		{"no noun", "", string(data), "lists no noun"},
	} {
		_, err := Parse(strings.NewReader(tt.index), strings.NewReader(tt.data), "", "")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// FuzzParse checks that no input makes Parse panic, and that what it
// accepts answers Related for any words.
func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join("testdata", "data.noun"))
	index, _ := os.ReadFile(filepath.Join("testdata", "index.noun"))
	f.Add(string(index), string(data), "son", "children")
	f.Add("a n 1 0 1 0 1\n", "1 0 n 01 a 0 001 @ 1 n 0000\n", "a", "a")
	f.Fuzz(func(t *testing.T, index, data, w, r string) {
		l, err := Parse(strings.NewReader(index), strings.NewReader(data), "", "")
		if err != nil {
			return
		}
		if v := l.Related(w, r); v < 0 || v > 1 {
			t.Fatalf("Related = %v", v)
		}
		l.Narrower(r)
	})
}

// writeTarball writes a gzipped tarball of files.
func writeTarball(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, b := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b))})
		tw.Write(b)
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSetup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, _ := os.ReadFile(filepath.Join("testdata", "data.noun"))
	index, _ := os.ReadFile(filepath.Join("testdata", "index.noun"))
	tgz := filepath.Join(dir, "fake.tgz")
	writeTarball(t, tgz, map[string][]byte{memberIndex: index, memberData: data, memberLicense: []byte("licence")})
	// The miniature converts, but it is not the pinned package.
	l, err := convertTarball(tgz)
	if err != nil || l.Lemmas() != 32 || l.License() != "licence" {
		t.Fatalf("convertTarball: %v", err)
	}
	cache := filepath.Join(dir, "cache")
	if _, err := Setup(ctx, SetupOptions{CacheDir: cache, Tarball: tgz}); !errors.Is(err, npmpkg.ErrChecksum) {
		t.Errorf("Setup with another tarball: err = %v, want ErrChecksum", err)
	}
	if _, err := os.Stat(filepath.Join(cache, DefaultFile)); !os.IsNotExist(err) {
		t.Errorf("a lexicon was written after a checksum failure (%v)", err)
	}
	// A cached file that opens is used without npm.
	os.MkdirAll(cache, 0o755)
	if err := l.Save(filepath.Join(cache, DefaultFile)); err != nil {
		t.Fatal(err)
	}
	if p, err := Setup(ctx, SetupOptions{CacheDir: cache, NPM: "/nonexistent/npm"}); err != nil || p != filepath.Join(cache, DefaultFile) {
		t.Errorf("Setup over a cached file = %q, %v", p, err)
	}
	// SetupLexicon hands back the lexicon its check opened.
	if p, got, err := SetupLexicon(ctx, SetupOptions{CacheDir: cache, NPM: "/nonexistent/npm"}); err != nil || p != filepath.Join(cache, DefaultFile) || got == nil || got.Lemmas() != 32 || got.License() != "licence" {
		t.Errorf("SetupLexicon over a cached file = %q, %v, %v", p, got, err)
	}
	// A damaged one is converted again, which needs npm.
	os.WriteFile(filepath.Join(cache, DefaultFile), []byte("STEMLEX\x00damaged"), 0o644)
	var log bytes.Buffer
	_, err = Setup(ctx, SetupOptions{CacheDir: cache, NPM: "/nonexistent/npm", Log: &log})
	if !errors.Is(err, npmpkg.ErrNoNPM) || !strings.Contains(log.String(), "cached lexicon unusable") {
		t.Errorf("Setup over a damaged file: err = %v, log %q", err, log.String())
	}
}

// TestRealLexicon checks the converted WordNet that `stem setup` leaves in
// the cache directory, or skips without it.
func TestRealLexicon(t *testing.T) {
	dir, err := wordvec.DefaultCacheDir()
	if err != nil {
		t.Skip(err)
	}
	l, err := Open(filepath.Join(dir, DefaultFile))
	if err != nil {
		t.Skipf("no converted lexicon (run stem setup): %v", err)
	}
	if l.Lemmas() != 117953 || l.Synsets() != 82192 || !strings.Contains(l.License(), "Princeton University") {
		t.Errorf("Lemmas %d Synsets %d, licence %.40q", l.Lemmas(), l.Synsets(), l.License())
	}
	// The words PathQuestion asks kinship with, which word vectors do
	// not tell apart.
	for _, tt := range []struct {
		word, rel string
		want      float32
	}{
		{"son", "children", 0.8}, {"daughter", "children", 0.8}, {"kid", "children", 1},
		{"wife", "spouse", 0.9}, {"husband", "spouse", 0.9}, {"mom", "parents", 0.8},
		{"sex", "gender", 1}, {"job", "profession", 0.9}, {"son", "parents", 0},
		{"child", "cause", 0}, {"darling", "spouse", 0},
	} {
		if got := l.Related(tt.word, tt.rel); got != tt.want {
			t.Errorf("Related(%q, %q) = %v, want %v", tt.word, tt.rel, got, tt.want)
		}
	}
}
