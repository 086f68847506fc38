package kg

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// randomKG writes a TSV KG of about n triples with hubs, duplicates,
// self-loops and namesakes (names equal after Normalize), the cases
// where ids, duplicates and the normalised index could go wrong.
func randomKG(r *rand.Rand, n, nEnt, nRel int) string {
	var sb strings.Builder
	name := func(i int) string {
		switch i % 7 {
		case 0:
			return fmt.Sprintf("Entity_%d", i/7)
		case 1:
			return fmt.Sprintf("entity %d", i/7) // a namesake of case 0
		case 2:
			return fmt.Sprintf("m.0%x", i) // a machine id
		case 3:
			return fmt.Sprintf("Ünïcödé %d", i)
		case 4:
			return "..." + strings.Repeat("!", i%5) // normalises to ""
		}
		return fmt.Sprintf("e%d", i)
	}
	for i := 0; i < n; i++ {
		h := r.IntN(nEnt)
		t := r.IntN(nEnt)
		if r.IntN(4) == 0 {
			t = r.IntN(3) // hubs
		}
		if r.IntN(50) == 0 {
			t = h // self-loop
		}
		rel := fmt.Sprintf("domain.type.rel%d", r.IntN(nRel))
		fmt.Fprintf(&sb, "%s\t%s\t%s\n", name(h), rel, name(t))
		if r.IntN(20) == 0 { // a duplicate, later
			fmt.Fprintf(&sb, "%s\t%s\t%s\n", name(h), rel, name(t))
		}
	}
	return sb.String()
}

// The snapshot BuildSnapshot writes is byte for byte the one
// WriteSnapshot writes for the graph Load reads, whatever the memory
// bound: in one run, or spilled over many runs and split partitions.
func TestBuildSnapshotMatchesMemory(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name          string
		n, nEnt, nRel int
		mem           int64
		wantRuns      bool
	}{
		{"small in memory", 200, 60, 5, 64 << 20, false},
		{"one run", 5000, 1500, 40, 64 << 20, false},
		{"many runs", 5000, 1500, 40, 64 << 10, true},
		{"tiny memory", 3000, 2000, 300, 16 << 10, true},
		{"split partitions", 12000, 9000, 300, 16 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "kg.tsv")
			if err := os.WriteFile(in, []byte(randomKG(r, tc.n, tc.nEnt, tc.nRel)), 0o644); err != nil {
				t.Fatal(err)
			}
			g, err := Load(ctx, in, FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			want := encode(t, g)
			out := filepath.Join(dir, "kg.stemkg")
			st, err := buildSnapshot(ctx, in, out, BuildOptions{MaxMemory: tc.mem})
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if st.Runs > 1 != tc.wantRuns {
				t.Errorf("%d runs; want more than one: %v", st.Runs, tc.wantRuns)
			}
			if st.Entities != g.NumEntities() || st.Triples != g.NumTriples() || st.Duplicates != g.Duplicates() || st.Bytes != int64(len(got)) {
				t.Errorf("stats %+v, graph %v", st, g.Stats(0))
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("snapshot differs from the in-memory one (%d vs %d bytes, first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 2 {
				t.Errorf("scratch left behind: %d entries in the folder", len(left))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Gzip input and the other text formats go through the same path.
func TestBuildSnapshotFormats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	nt := "<http://x/a> <http://x/r> \"lit\"@en .\n<http://x/a> <http://x/r> <http://x/b> .\n# c\n<http://x/b> <http://x/s> _:n1 .\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(nt))
	zw.Close()
	for _, tc := range []struct {
		file string
		data []byte
	}{
		{"kg.nt", []byte(nt)},
		{"kg.nt.gz", gz.Bytes()},
		{"kb.txt", []byte("Kismet|directed_by|William Dieterle\nKismet|starred_actors|Marlene Dietrich\n")},
	} {
		in := filepath.Join(dir, tc.file)
		if err := os.WriteFile(in, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := Load(ctx, in, FormatAuto)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		out := in + ".stemkg"
		if _, err := buildSnapshot(ctx, in, out, BuildOptions{MaxMemory: 8 << 10}); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, encode(t, g)) {
			t.Errorf("%s: snapshot differs from the in-memory one", tc.file)
		}
	}
}

// The prefetcher hands back every byte in order, whatever the read sizes,
// and its error at the end.
func TestPrefetcher(t *testing.T) {
	data := make([]byte, 3*prefetchBlock+12345)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, size := range []int{1, 1000, prefetchBlock, 3 * prefetchBlock} {
		p := newPrefetcher(bytes.NewReader(data))
		got, err := io.ReadAll(struct{ io.Reader }{readSized{p, size}})
		p.close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("reads of %d: %d bytes, err %v", size, len(got), err)
		}
	}
	p := newPrefetcher(iotest.ErrReader(errors.New("disk on fire")))
	if _, err := io.ReadAll(p); err == nil || err.Error() != "disk on fire" {
		t.Errorf("error %v, want the reader's", err)
	}
	p.close()
}

type readSized struct {
	r    io.Reader
	size int
}

func (r readSized) Read(b []byte) (int, error) { return r.r.Read(b[:min(len(b), r.size)]) }

// A cancelled or failed build leaves neither a snapshot nor scratch
// behind, and says why.
func TestBuildSnapshotCancelledOrFailed(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "kg.tsv")
	if err := os.WriteFile(in, []byte(randomKG(rand.New(rand.NewPCG(1, 1)), 3000, 500, 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.tsv")
	if err := os.WriteFile(bad, []byte("a\tr\tb\nbroken line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		in   string
		ctx  context.Context
		want string
	}{{in, ctx, "context canceled"}, {bad, context.Background(), "bad.tsv:2: wrong number of columns"}} {
		out := filepath.Join(dir, "out.stemkg")
		_, err := buildSnapshot(tc.ctx, tc.in, out, BuildOptions{MaxMemory: 16 << 10})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.in, err, tc.want)
		}
		left, _ := os.ReadDir(dir)
		if len(left) != 2 {
			t.Errorf("%s: %d entries left in the folder, want the two inputs", tc.in, len(left))
		}
	}
}

func TestBuildStatsWriteText(t *testing.T) {
	st := BuildStats{Input: 1000, Entities: 40, Relations: 3, Triples: 990, Duplicates: 10, Runs: 2, Bytes: 19800,
		Phases: []PhaseTime{{"read", 1.25}, {"write", 0.5}}}
	var buf bytes.Buffer
	st.WriteText(&buf, "x.stemkg", 2*time.Second, "12 MiB")
	want := "wrote x.stemkg: 40 entities, 3 relations, 990 triples (10 duplicate lines dropped), 20.0 bytes per triple, in 2s (500 triples/s, 2 runs), peak memory 12 MiB\n" +
		"phases: read 1.2s, write 0.5s\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	st.Freebase = &FreebaseStats{Lines: 9, Kept: 5, Edges: 3, Names: 1, Aliases: 1, Unparsable: 1, FirstUnparsable: "bad line"}
	buf.Reset()
	st.WriteText(&buf, "x.stemkg", 2*time.Second, "12 MiB")
	if line := "freebase: 9 lines, 5 kept by FilterEnglishTriplets' rules: 3 edges, 1 names, 1 aliases; 1 kept lines were not N-Triples and were skipped (the first: bad line)\n"; !strings.HasSuffix(buf.String(), line) {
		t.Errorf("got\n%s\nwant it to end with\n%s", buf.String(), line)
	}
}
