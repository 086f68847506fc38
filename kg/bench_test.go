package kg

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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

// synthSnapshot writes a deterministic power-law graph of about nTri
// triples to a v2 snapshot in dir and returns its path. About 0.3*nTri
// entities named "Entity name N" and 3000 relations named like
// "domain12.type3.property45"; heads are uniform, tails and relations
// Zipf-distributed (hubs), as in real KGs. The graph itself is dropped
// before returning, so it does not count towards the load's memory.
func synthSnapshot(b *testing.B, dir string, nTri int) string {
	b.Helper()
	nEnt := max(2, nTri*3/10)
	const nRel = 3000
	r := rand.New(rand.NewPCG(1, 2))
	tailZipf := rand.NewZipf(r, 1.2, 4, uint64(nEnt-1))
	relZipf := rand.NewZipf(r, 1.1, 2, nRel-1)
	bld := NewBuilder()
	var hb, rb, tb []byte
	entName := func(buf []byte, id uint64) []byte {
		return strconv.AppendUint(append(buf[:0], "Entity name "...), id, 10)
	}
	for range nTri {
		h := r.Uint64N(uint64(nEnt))
		t := (tailZipf.Uint64() * 2654435761) % uint64(nEnt) // spread the hubs over the id range
		rel := relZipf.Uint64()
		hb, tb = entName(hb, h), entName(tb, t)
		rb = append(rb[:0], "domain"...)
		rb = strconv.AppendUint(rb, rel%97, 10)
		rb = append(rb, ".type"...)
		rb = strconv.AppendUint(rb, rel%31, 10)
		rb = append(rb, ".property"...)
		rb = strconv.AppendUint(rb, rel, 10)
		bld.addBytes(hb, rb, tb)
	}
	g, err := bld.Build()
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "synth.kg")
	if err := WriteSnapshot(path, g); err != nil {
		b.Fatal(err)
	}
	return path
}

// residentBytes returns the process's resident set size from
// /proc/self/statm (resident pages times the page size), after returning
// freed heap memory to the OS so that garbage does not count.
func residentBytes(b *testing.B) int64 {
	b.Helper()
	debug.FreeOSMemory() // runs a GC first
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skipf("no /proc/self/statm to measure resident memory: %v", err)
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		b.Fatalf("unexpected /proc/self/statm %q", data)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// touchAll reads every section of g (names, hash indexes, columns,
// adjacency, normalised index), so that every page of a mapped snapshot
// is resident when memory is measured, whatever the kernel did lazily.
func touchAll(g *Graph) int64 {
	var s int64
	for _, t := range []*nameTable{&g.ents, &g.relTab} {
		for _, c := range t.blob {
			s += int64(c)
		}
		for _, v := range t.off {
			s += int64(v)
		}
		for _, v := range t.slots {
			s += int64(v)
		}
	}
	norm := g.normIndex()
	for _, col := range [][]int32{g.heads, g.rels, g.tails, g.outOff, g.outIdx, g.inOff, g.inIdx, norm.slots, norm.off, norm.ids} {
		for _, v := range col {
			s += int64(v)
		}
	}
	return s
}

// benchLoad times ReadSnapshot of path and reports ms/load and B/triple.
//
// B/triple is the resident memory the loaded graph costs, names, hash
// indexes and the normalised-name index included, divided by its triples:
// the RSS (/proc/self/statm, after a GC that returns freed heap to the OS)
// after one load plus a pass touching every section, minus the RSS before
// it. A memory-mapped snapshot's pages count in the RSS once touched, so
// the figure covers the mapping as well as any Go heap the load
// allocated. It is measured once, outside the timed loop; the timed loop
// then loads the file b.N times (each load verifies the CRC-32C and the
// structure, so it reads every byte).
func benchLoad(b *testing.B, path string) {
	b.Helper()
	before := residentBytes(b)
	g, err := ReadSnapshot(path)
	if err != nil {
		b.Fatal(err)
	}
	sink := touchAll(g)
	after := residentBytes(b)
	nTri := g.NumTriples()
	b.Logf("%s: %d entities, %d relations, %d triples; resident +%.1f MB",
		path, g.NumEntities(), g.NumRelations(), nTri, float64(after-before)/(1<<20))
	runtime.KeepAlive(g)
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadSnapshot(path); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/load")
	b.ReportMetric(float64(after-before)/float64(nTri), "B/triple")
	_ = sink
}

// BenchmarkSnapshotLoad loads a synthetic power-law graph of
// STEM_BENCH_TRIPLES triples (default 1M) from a v2 snapshot in a
// temporary directory. For 10M triples:
//
//	STEM_BENCH_TRIPLES=10000000 go test -run '^$' -bench SnapshotLoad$ -benchtime 3x ./kg/
func BenchmarkSnapshotLoad(b *testing.B) {
	nTri := 1_000_000
	if s := os.Getenv("STEM_BENCH_TRIPLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("STEM_BENCH_TRIPLES=%q: want a positive number of triples", s)
		}
		nTri = n
	}
	path := synthSnapshot(b, b.TempDir(), nTri)
	benchLoad(b, path)
}

// BenchmarkSnapshotLoadFile is BenchmarkSnapshotLoad for the snapshot
// named by STEM_BENCH_KG (such as the 10M-triple output of `stem kg
// synth` followed by `stem kg build`).
func BenchmarkSnapshotLoadFile(b *testing.B) {
	path := os.Getenv("STEM_BENCH_KG")
	if path == "" {
		b.Skip("set STEM_BENCH_KG to a snapshot file (stem kg build --out FILE ...) to benchmark loading it")
	}
	benchLoad(b, path)
}

// BenchmarkSnapshotCRC measures the CRC-32C pass every load makes (the
// hardware-accelerated Castagnoli table); MB/s must stay above ~3300, that
// is under 0.3 s per GB.
func BenchmarkSnapshotCRC(b *testing.B) {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		crc32.Checksum(data, castagnoli)
	}
}

// BenchmarkNormMissFile looks up 10,000 texts no entity is named (as
// linking does for most of a question's n-grams) in the normalised-name
// index of the snapshot STEM_BENCH_KG names, mapped as stem serve maps
// it, and reports the time per lookup:
//
//	STEM_BENCH_KG=fb10m.stemkg GOEXPERIMENT=simd go test -run '^$' -bench NormMissFile -benchtime 20x ./kg/
func BenchmarkNormMissFile(b *testing.B) {
	path := os.Getenv("STEM_BENCH_KG")
	if path == "" {
		b.Skip("set STEM_BENCH_KG to a snapshot file (stem kg build --out FILE ...) to benchmark its name lookups")
	}
	g, err := ReadSnapshot(path)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprintf("what is the %d of", i)
	}
	for b.Loop() {
		for _, k := range keys {
			if g.EntitiesByNorm(k) != nil {
				b.Fatalf("%q names an entity", k)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/lookup")
}
