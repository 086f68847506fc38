package kg

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
)

// The benchmarks use MetaQA's kb.txt (130,471 triples) from the shared data
// folder; they skip when it is absent (see internal/shareddata for where it
// is looked for). Run: go test -run '^$' -bench . -benchtime 5x ./kg/

// heapMB reports the live heap a loaded graph keeps, after a GC.
func heapMB(b *testing.B, load func() *Graph) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g := load()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MB")
	runtime.KeepAlive(g)
}

func BenchmarkLoadText(b *testing.B) {
	path := shareddata.Path(b, "metaqa/kb.txt")
	load := func() *Graph {
		g, err := Load(context.Background(), path, FormatPipe)
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	b.ReportAllocs()
	for b.Loop() {
		load()
	}
	b.StopTimer()
	heapMB(b, load)
}

func BenchmarkLoadSnapshot(b *testing.B) {
	src := shareddata.Path(b, "metaqa/kb.txt")
	g, err := Load(context.Background(), src, FormatPipe)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "kb.kg")
	if err := WriteSnapshot(path, g); err != nil {
		b.Fatal(err)
	}
	load := func() *Graph {
		g, err := ReadSnapshot(path)
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	b.ReportAllocs()
	for b.Loop() {
		load()
	}
	b.StopTimer()
	heapMB(b, load)
}

func BenchmarkWriteSnapshot(b *testing.B) {
	g, err := Load(context.Background(), shareddata.Path(b, "metaqa/kb.txt"), FormatPipe)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "kb.kg")
	for b.Loop() {
		if err := WriteSnapshot(path, g); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHasTriple looks up every stored triple once per op (ns/op is per
// 130,471 lookups).
func BenchmarkHasTriple(b *testing.B) {
	g, err := Load(context.Background(), shareddata.Path(b, "metaqa/kb.txt"), FormatPipe)
	if err != nil {
		b.Fatal(err)
	}
	heads, rels, tails := g.Columns()
	for b.Loop() {
		for i := range heads {
			if !g.HasTriple(heads[i], rels[i], tails[i]) {
				b.Fatal("stored triple not found")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(heads)), "ns/lookup")
}

// BenchmarkEntitiesByNorm includes building the index on first use.
func BenchmarkEntitiesByNorm(b *testing.B) {
	path := shareddata.Path(b, "metaqa/kb.txt")
	for b.Loop() {
		b.StopTimer()
		g, err := Load(context.Background(), path, FormatPipe)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if len(g.EntitiesByNorm("william dieterle")) != 2 {
			b.Fatal("wrong match")
		}
	}
}
