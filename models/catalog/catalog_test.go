package catalog

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
)

// --entity-index takes kgvec's kinds by name; anything else is refused
// before any work.
func TestCheckEntityIndex(t *testing.T) {
	for _, tc := range []struct {
		kind string
		ok   bool
	}{{"", true}, {"auto", true}, {"exact", true}, {"ivf", true}, {"hnsw", true}, {"fast", false}, {"HNSW", false}} {
		s := DefaultEncoderSettings()
		s.EntityIndex = tc.kind
		err := s.Check()
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "--entity-index")) {
			t.Errorf("%q: %v", tc.kind, err)
		}
	}
}

func TestOpenLexicon(t *testing.T) {
	ctx := context.Background()
	s := DefaultEncoderSettings()
	if s.Lexicon != "wordnet" {
		t.Fatalf("default lexicon %q, want wordnet", s.Lexicon)
	}
	s.Lexicon = "none"
	if l, err := OpenLexicon(ctx, s, nil); l != nil || err != nil {
		t.Errorf("none: %v, %v", l, err)
	}
	s.Lexicon = filepath.Join(t.TempDir(), "missing.stemlex")
	if l, err := OpenLexicon(ctx, s, nil); l != nil || err == nil || !strings.Contains(err.Error(), "missing.stemlex") {
		t.Errorf("missing file: %v, %v; want an error naming it", l, err)
	}
	// The default, where it cannot be set up (an empty cache, no npm):
	// planning goes on without it, and the log says so.
	t.Setenv(wordvec.CacheEnv, t.TempDir())
	t.Setenv("PATH", "")
	s.Lexicon = "wordnet"
	var log bytes.Buffer
	if l, err := OpenLexicon(ctx, s, &log); l != nil || err != nil || !strings.Contains(log.String(), "warning: planning without the WordNet lexicon") {
		t.Errorf("no npm: %v, %v, log %q", l, err, log.String())
	}
}
