package kg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/internal/extsort"
)

// DefaultBuildMemory is BuildSnapshot's default memory bound, 2 GiB.
const DefaultBuildMemory = 2 << 30

// MinBuildMemory is the smallest memory bound BuildSnapshot accepts.
const MinBuildMemory = 1 << 20

// BuildOptions configures BuildSnapshot.
type BuildOptions struct {
	// Format is the input's format (FormatAuto detects it, as Load does).
	Format Format
	// MaxMemory bounds the memory the build holds at once, in bytes
	// (DefaultBuildMemory when 0). The process's resident memory stays
	// within about this plus the Go runtime's own (tens of MB).
	MaxMemory int64
	// TempDir is where scratch files go; the output's folder when empty.
	// The build creates its own folder inside and removes it when done,
	// failed or cancelled. It needs about 1.3 times the snapshot's size.
	TempDir string
	// Progress, when not nil, is called now and then with the phase and
	// how far it is.
	Progress func(BuildProgress)
}

// BuildProgress is how far one phase of BuildSnapshot is. Phases run in
// this order: "read" (input bytes), "names" (partitions of names spilled
// to disk; only when they did not fit in memory), "ids" (triples given
// their ids), "index" (entities hashed and grouped by normalised name),
// "sort out" and "sort in" (triples ordered for the two adjacencies),
// "write" (snapshot bytes).
type BuildProgress struct {
	Phase       string
	Done, Total int64
}

// BuildStats describes a finished build.
type BuildStats struct {
	Input                                    int64 // triples read, duplicates included
	Entities, Relations, Triples, Duplicates int
	// Runs is the number of pieces the input's names were cut into to fit
	// the memory bound (1: they fitted at once).
	Runs int
	// Bytes is the snapshot's size.
	Bytes int64
	// Freebase is what the Freebase filter did (FormatFreebase only).
	Freebase *FreebaseStats
	// Phases is how long each phase took, in order.
	Phases []PhaseTime
}

// WriteText prints a finished build's summary as stem kg build does: the
// snapshot out's counts and size per triple, the rate over elapsed, each
// phase's time and what the Freebase filter kept; peak is the process's
// peak memory, as the caller measured it.
func (st BuildStats) WriteText(w io.Writer, out string, elapsed time.Duration, peak string) {
	fmt.Fprintf(w, "wrote %s: %d entities, %d relations, %d triples (%d duplicate lines dropped), %.1f bytes per triple, in %s (%.0f triples/s, %d runs), peak memory %s\n",
		out, st.Entities, st.Relations, st.Triples, st.Duplicates, float64(st.Bytes)/float64(max(st.Triples, 1)),
		elapsed.Round(time.Millisecond), float64(st.Input)/elapsed.Seconds(), st.Runs, peak)
	phases := make([]string, 0, len(st.Phases))
	for _, p := range st.Phases {
		phases = append(phases, fmt.Sprintf("%s %.1fs", p.Phase, p.Seconds))
	}
	fmt.Fprintf(w, "phases: %s\n", strings.Join(phases, ", "))
	if fb := st.Freebase; fb != nil {
		fmt.Fprintf(w, "freebase: %d lines, %d kept by FilterEnglishTriplets' rules: %d edges, %d names, %d aliases; %d kept lines were not N-Triples and were skipped",
			fb.Lines, fb.Kept, fb.Edges, fb.Names, fb.Aliases, fb.Unparsable)
		if fb.FirstUnparsable != "" {
			fmt.Fprintf(w, " (the first: %s)", fb.FirstUnparsable)
		}
		fmt.Fprintln(w)
	}
}

// PhaseTime is how long one phase of a build took.
type PhaseTime struct {
	Phase   string
	Seconds float64
}

// BuildSnapshot reads the KG file in (any text format Load reads, gzip or
// bzip2 compressed or not) and writes its snapshot to out, holding about
// opts.MaxMemory bytes at most, whatever the input's size: names are
// interned run by run and resolved through hash partitions on disk
// (extDict), and triples are ordered by external sorts (package
// internal/extsort). The snapshot is byte for byte the one WriteSnapshot
// writes for the graph Load gives, so it loads the same way (mapped and
// checked). out is written atomically: a failed or cancelled build leaves
// no file, and no scratch.
func BuildSnapshot(ctx context.Context, in, out string, opts BuildOptions) (BuildStats, error) {
	if opts.MaxMemory == 0 {
		opts.MaxMemory = DefaultBuildMemory
	}
	if opts.MaxMemory < MinBuildMemory {
		return BuildStats{}, fmt.Errorf("build %s: memory bound %d bytes is below the minimum %d", out, opts.MaxMemory, MinBuildMemory)
	}
	return buildSnapshot(ctx, in, out, opts)
}

// buildSnapshot is BuildSnapshot without the memory floor, so that tests
// can force a small input through every spill.
func buildSnapshot(ctx context.Context, in, out string, opts BuildOptions) (BuildStats, error) {
	tmp := opts.TempDir
	if tmp == "" {
		tmp = filepath.Dir(out)
	}
	dir, err := os.MkdirTemp(tmp, ".stemkg-build-")
	if err != nil {
		return BuildStats{}, fmt.Errorf("build %s: scratch folder: %w", out, err)
	}
	defer os.RemoveAll(dir)
	b := &extBuild{ctx: ctx, dir: dir, mem: opts.MaxMemory, opts: opts, in: in}
	return b.run(in, out)
}

// extBuild is one BuildSnapshot run. Memory is shared out per phase: the
// run's name tables take dictShare of the bound, a partition being
// resolved partShare, a sorter sortShare; phases hand their memory back
// before the next starts.
type extBuild struct {
	ctx  context.Context
	opts BuildOptions
	in   string
	dir  string
	mem  int64

	ents, rels *extDict
	tl         *tempFile // run-local ids of each triple, 3 words
	runTri     []int64   // triples per run
	cur        int64     // triples in the current run
	n          int64     // triples read
	tlw        [12]byte
	lastHead   []byte // the previous triple's head and its local id
	lastH      int32
	phases     []PhaseTime
	phaseStart time.Time

	nE, nR             int
	entBytes, relBytes int64
	entOff, entBlob    string // scratch files of the sections
	relOff, relBlob    string
	entSlots, relSlots string
	normSlots          string
	normOff, normIDs   string
	normGroups, normN  int
	tg                 string // global ids of each triple, 3 words
	outOff, outSeq     string
	inOff, inIdx       string
	entSlotsLen        int
	relSlotsLen        int
	aliases            extAliases // the alias sections' scratch files
	normSlotsLen       int
	dropped            rankBits
	ndrop              int
	norm               *partSet        // (Normalize(name), id) of every entity
	outSort            *extsort.Sorter // (head, rel, tail, seq) of every triple

	// RDF with names (see extfreebase.go): a Freebase dump or N-Triples.
	dialect     *rdfDialect
	freebase    bool // the input is a Freebase dump
	fb          FreebaseStats
	key         []byte
	labels      *partSet // name literals by literal
	labelsByMid *partSet // counted names by machine id
	removed     rankBits // terms merged into a namesake
	rep         map[uint32]uint32
	merged      int
	aliasRaw    *tempFile // aliases by run and local id
	nAliasRaw   int64
}

const (
	dictShare = 0.45
	partShare = 0.15
	sortShare = 0.5
)

func (b *extBuild) progress(phase string, done, total int64) {
	if n := len(b.phases); n == 0 || b.phases[n-1].Phase != phase {
		b.endPhase()
		b.phases = append(b.phases, PhaseTime{Phase: phase})
		b.phaseStart = time.Now()
	}
	if b.opts.Progress != nil {
		b.opts.Progress(BuildProgress{Phase: phase, Done: done, Total: total})
	}
}

// endPhase records how long the current phase took.
func (b *extBuild) endPhase() {
	if n := len(b.phases); n > 0 {
		b.phases[n-1].Seconds = time.Since(b.phaseStart).Seconds()
	}
}

func (b *extBuild) run(in, out string) (BuildStats, error) {
	if err := b.read(in); err != nil {
		return BuildStats{}, err
	}
	if b.n == 0 {
		return BuildStats{}, fmt.Errorf("%s: %w", in, ErrEmpty)
	}
	if err := b.names(); err != nil {
		return BuildStats{}, err
	}
	if err := b.translate(); err != nil {
		return BuildStats{}, err
	}
	if err := b.adjacency(); err != nil {
		return BuildStats{}, err
	}
	size, err := b.write(out)
	if err != nil {
		return BuildStats{}, err
	}
	b.endPhase()
	st := BuildStats{Input: b.n, Entities: b.nE, Relations: b.nR, Triples: int(b.n) - b.ndrop, Duplicates: b.ndrop,
		Runs: len(b.runTri), Bytes: size, Phases: b.phases}
	if b.freebase {
		st.Freebase = &b.fb
	}
	return st, nil
}

// countingReader counts the bytes read through it for progress.
type countingReader struct {
	r    io.Reader
	n    int64
	tick func(int64)
	last int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n-c.last >= 4<<20 {
		c.last = c.n
		c.tick(c.n)
	}
	return n, err
}

// read parses the input into the run dictionaries and the run-local
// triple file.
func (b *extBuild) read(in string) error {
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("build %s: %w", in, err)
	}
	cr := &countingReader{r: f, tick: func(n int64) { b.progress("read", n, st.Size()) }}
	br := bufio.NewReaderSize(cr, 256<<10)
	r, compressed, err := decompress(br, in)
	if err != nil {
		return err
	}
	if compressed {
		// Decompressing takes about as long as the rest of reading: it
		// runs ahead on another core.
		pr := newPrefetcher(r)
		defer pr.close()
		br = bufio.NewReaderSize(pr, 256<<10)
	}
	format := b.opts.Format
	if format == "" || format == FormatAuto {
		if format, err = detect(br, in); err != nil {
			return err
		}
	}
	b.ents, b.rels = newExtDict("entity", b.dir), newExtDict("relation", b.dir)
	if b.tl, err = createTemp(b.dir, "triples-local"); err != nil {
		return err
	}
	emit := b.add
	switch format {
	case FormatTSV:
		err = scanDelimited(b.ctx, br, in, '\t', emit)
	case FormatPipe:
		err = scanDelimited(b.ctx, br, in, '|', emit)
	case FormatNTriples, FormatFreebase:
		b.dialect, b.freebase = ntDialect, format == FormatFreebase
		if b.freebase {
			b.dialect = freebaseDialect
		}
		if b.labels, err = newPartSet(b.dir, "labels", dictPartBits, 4<<20); err != nil {
			return err
		}
		if b.labelsByMid, err = newPartSet(b.dir, "labels-by-id", dictPartBits, 4<<20); err != nil {
			return err
		}
		err = scanRDF(b.ctx, br, in, b.dialect, &b.fb, emit, b.addLabel)
		if err == nil && b.freebase {
			err = notDump(in, &b.fb)
		}
	case FormatSnapshot:
		return fmt.Errorf("build %s: the input is a snapshot already", in)
	default:
		return fmt.Errorf("build %s: %w", in, unknownFormat(string(format)))
	}
	if err != nil {
		return err
	}
	b.progress("read", st.Size(), st.Size())
	if (b.ents.spilled() || b.dialect != nil) && b.cur > 0 {
		// RDF names are given while resolving, so they are always
		// spilled.
		if err := b.flushRun(); err != nil {
			return err
		}
	}
	if !b.ents.spilled() {
		b.runTri = append(b.runTri, b.n)
	}
	return b.tl.finish()
}

// add takes one triple of the input.
func (b *extBuild) add(h, r, t []byte) error {
	switch {
	case len(h) == 0 || len(r) == 0 || len(t) == 0:
		return fmt.Errorf("build %s: triple %d: %w", b.in, b.n+1, ErrEmptyField)
	case b.n >= maxID:
		return fmt.Errorf("build %s: triple %d: %w", b.in, b.n+1, ErrTooLarge)
	}
	// Dumps list a subject's triples together (Freebase's, kg synth's):
	// the head of the last triple is often this one's.
	lh := b.lastH
	if !bytes.Equal(h, b.lastHead) {
		lh = b.ents.tab.intern(bytesView(h))
		b.lastHead, b.lastH = append(b.lastHead[:0], h...), lh
	}
	lr := b.rels.tab.intern(bytesView(r))
	lt := b.ents.tab.intern(bytesView(t))
	le := binary.LittleEndian
	le.PutUint32(b.tlw[0:], uint32(lh))
	le.PutUint32(b.tlw[4:], uint32(lr))
	le.PutUint32(b.tlw[8:], uint32(lt))
	if err := b.tl.write(b.tlw[:]); err != nil {
		return err
	}
	b.n++
	b.cur++
	if float64(b.ents.bytes()+b.rels.bytes()) > dictShare*float64(b.mem) {
		return b.flushRun()
	}
	return nil
}

// flushRun ends the current run: both tables go to their partitions.
func (b *extBuild) flushRun() error {
	run := len(b.runTri)
	if run >= 1<<20 {
		return fmt.Errorf("build %s: more than %d runs: raise the memory bound", b.in, 1<<20)
	}
	if err := b.ents.flush(run); err != nil {
		return err
	}
	if err := b.rels.flush(run); err != nil {
		return err
	}
	b.runTri = append(b.runTri, b.cur)
	b.cur = 0
	b.lastHead = b.lastHead[:0] // local ids start over
	return nil
}

// free hands memory back to the OS between phases, so that resident
// memory follows what the phase holds.
func free() { debug.FreeOSMemory() }

// names resolves both tables, writes the name sections' scratch files
// and builds the hash indexes and the normalised-name index.
func (b *extBuild) names() error {
	partMem := int64(partShare * float64(b.mem))
	if b.dialect != nil {
		if err := b.countLabels(); err != nil {
			return err
		}
		if err := b.freebaseNames(); err != nil {
			return err
		}
	}
	if b.ents.spilled() {
		b.ents.tab, b.rels.tab = nameTable{}, nameTable{}
		free()
		if err := b.ents.resolve(partMem, func(p, n int64) { b.progress("names", p, 2*n) }); err != nil {
			return err
		}
		if err := b.rels.resolve(partMem, func(p, n int64) { b.progress("names", n+p, 2*n) }); err != nil {
			return err
		}
		b.nE, b.nR = b.ents.n, b.rels.n
		if b.dialect != nil {
			if err := b.mergeNamesakes(); err != nil {
				return err
			}
			b.nE -= b.merged
		}
	} else {
		b.nE, b.nR = b.ents.tab.len(), b.rels.tab.len()
	}
	if b.nE >= maxID || b.nR >= maxID {
		return fmt.Errorf("build %s: %w", b.in, ErrTooLarge)
	}
	var err error
	if b.entBytes, b.entOff, b.entBlob, b.entSlots, err = b.nameSections(b.ents, b.nE, true); err != nil {
		return err
	}
	if b.relBytes, b.relOff, b.relBlob, b.relSlots, err = b.nameSections(b.rels, b.nR, false); err != nil {
		return err
	}
	if !b.ents.spilled() {
		b.ents.tab, b.rels.tab = nameTable{}, nameTable{}
	}
	b.ents.dropNames()
	b.rels.dropNames()
	free()
	if err := b.normIndex(); err != nil {
		return err
	}
	if b.dialect != nil {
		return b.aliasSections()
	}
	return b.emptyAliases()
}

// nameSections writes a table's offsets, blob and canonical hash index
// to scratch files; for entities it also spills each name's normalised
// form for normIndex.
func (b *extBuild) nameSections(d *extDict, n int, ents bool) (blobBytes int64, offName, blobName, slotsName string, err error) {
	off, err := createTemp(b.dir, d.what+"-off")
	if err != nil {
		return 0, "", "", "", err
	}
	blob, err := createTemp(b.dir, d.what+"-blob")
	if err != nil {
		return 0, "", "", "", err
	}
	size := tableSize(n)
	// eachName holds one run's names at a time beside the sorter.
	slots := extsort.New(b.dir, 2, 2, max(int64(sortShare*float64(b.mem))-d.runBytes(), b.mem/20))
	defer slots.Close()
	var norm *partSet
	if ents {
		// Records of about a name's size plus 8 bytes; enough partitions
		// that each fits its share of memory.
		bits := 0
		for est := float64(n) * 40; est > partShare*float64(b.mem)*float64(int(1)<<bits) && bits < 12; {
			bits++
		}
		if norm, err = newPartSet(b.dir, "norm", bits, int64(0.05*float64(b.mem))); err != nil {
			return 0, "", "", "", err
		}
	}
	if err := off.u32(0); err != nil {
		return 0, "", "", "", err
	}
	var nbuf []byte
	err = d.eachName(func(term int32, name []byte) error {
		id := term
		if ents && b.merged > 0 {
			if b.removed.has(uint32(term)) {
				return nil
			}
			id = int32(b.entID(uint32(term)))
		}
		if id%(1<<16) == 0 {
			if err := b.ctx.Err(); err != nil {
				return err
			}
			if ents {
				b.progress("index", int64(id), int64(n))
			}
		}
		if err := blob.write(name); err != nil {
			return err
		}
		if blob.n > math.MaxUint32 {
			return fmt.Errorf("build %s: %w: %s names take more than 4 GiB", b.in, ErrTooLarge, d.what)
		}
		if err := off.u32(uint32(blob.n)); err != nil {
			return err
		}
		if err := slots.Add(uint32(homeIn(hashName(bytesView(name)), size)), uint32(id)); err != nil {
			return err
		}
		if norm != nil {
			nbuf = appendNormalize(nbuf[:0], bytesView(name))
			if len(nbuf) > 0 {
				return norm.add(internHash(bytesView(nbuf)), nbuf, nil, uint32(id), 0)
			}
		}
		return nil
	})
	if err != nil {
		return 0, "", "", "", err
	}
	if err := off.finish(); err != nil {
		return 0, "", "", "", err
	}
	if err := blob.finish(); err != nil {
		return 0, "", "", "", err
	}
	if norm != nil {
		if err := norm.finish(); err != nil {
			return 0, "", "", "", err
		}
		b.norm = norm
	}
	slotsName, slotsLen, err := b.sweep(d.what+"-slots", size, slots, nil)
	if err != nil {
		return 0, "", "", "", err
	}
	if ents {
		b.entSlotsLen = slotsLen
	} else {
		b.relSlotsLen = slotsLen
	}
	return blob.n, off.name, blob.name, slotsName, nil
}

// sweep writes the canonical hash index of the sorted (home, key) pairs
// of s to a scratch file of int32s, over a range of size slots, and
// returns its name and length. Keys are written as they are, or as
// rank(key) when rank is not nil.
func (b *extBuild) sweep(name string, size int, s *extsort.Sorter, rank func(uint32) uint32) (string, int, error) {
	it, err := s.Iter()
	if err != nil {
		return "", 0, err
	}
	defer it.Close()
	f, err := createTemp(b.dir, name)
	if err != nil {
		return "", 0, err
	}
	pos := 0
	next := func() (uint32, uint32, bool) {
		rec, ok := it.Next()
		if !ok {
			return 0, 0, false
		}
		return rec[0], rec[1], true
	}
	empty := ^uint32(0)
	n, err := sweepSlots(size, next, func(p int, id int32) error {
		for ; pos < p; pos++ {
			if err := f.u32(empty); err != nil {
				return err
			}
		}
		v := uint32(id)
		if rank != nil {
			v = rank(v)
		}
		pos++
		return f.u32(v)
	})
	if err == nil {
		err = it.Err()
	}
	if err != nil {
		return "", 0, err
	}
	for ; pos < n; pos++ {
		if err := f.u32(empty); err != nil {
			return "", 0, err
		}
	}
	return f.name, n, f.finish()
}

var errScratch = errors.New("damaged scratch file")
