package kg

import (
	"fmt"
	"math"
	"unsafe"
)

// maxID is the largest count an int32 id space holds.
const maxID = math.MaxInt32

// Builder collects triples by name and turns them into a Graph. Names are
// interned as they arrive into the same compact tables a Graph keeps (one
// byte blob, offsets and a hash index), so memory grows with the distinct
// names' bytes plus a few int32s each, and with the triples' three int32
// columns, not with lines. A Builder is not safe for concurrent use.
type Builder struct {
	ents, rels       nameTable
	heads, rs, tails []int32
	err              error
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{ents: newNameTable(), rels: newNameTable()}
}

// Len returns the number of triples added so far, duplicates included.
func (b *Builder) Len() int { return len(b.heads) }

// Add appends the triple (head, rel, tail). Problems (an empty name, more
// entities than int32 ids) are remembered and returned by Build, so a load
// loop needs no error check per line.
func (b *Builder) Add(head, rel, tail string) {
	if b.err != nil {
		return
	}
	if err := b.check(head == "", rel == "", tail == "", len(head)+len(tail), len(rel)); err != nil {
		b.err = err
		return
	}
	h := b.ents.intern(head)
	r := b.rels.intern(rel)
	t := b.ents.intern(tail)
	b.push(h, r, t)
}

// AddEntity adds an entity by name without a triple: a graph fetched for
// some entities holds each of them, with no edges where it has none, so
// that asking for it by name finds it.
func (b *Builder) AddEntity(name string) {
	if b.err != nil {
		return
	}
	if name == "" {
		b.err = fmt.Errorf("entity %d: %w: empty name", b.ents.len()+1, ErrEmptyField)
		return
	}
	if err := b.check(false, false, false, len(name), 0); err != nil {
		b.err = err
		return
	}
	b.ents.intern(name)
}

// addBytes is Add for loaders that hold the fields as byte slices: names
// are looked up and copied into the tables without allocating a string.
func (b *Builder) addBytes(head, rel, tail []byte) {
	if b.err != nil {
		return
	}
	if err := b.check(len(head) == 0, len(rel) == 0, len(tail) == 0, len(head)+len(tail), len(rel)); err != nil {
		b.err = err
		return
	}
	h := b.ents.intern(bytesView(head))
	r := b.rels.intern(bytesView(rel))
	t := b.ents.intern(bytesView(tail))
	b.push(h, r, t)
}

// bytesView returns b as a string without copying, for lookups and for
// interning (which copies the bytes it keeps); the string must not outlive
// the call.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// check validates one triple before it is added; entBytes and relBytes are
// the most name bytes it can add to each table, which must stay
// addressable by uint32 offsets.
func (b *Builder) check(emptyHead, emptyRel, emptyTail bool, entBytes, relBytes int) error {
	n := len(b.heads) + 1
	switch {
	case emptyHead:
		return fmt.Errorf("triple %d: %w: empty head", n, ErrEmptyField)
	case emptyRel:
		return fmt.Errorf("triple %d: %w: empty relation", n, ErrEmptyField)
	case emptyTail:
		return fmt.Errorf("triple %d: %w: empty tail", n, ErrEmptyField)
	case len(b.heads) >= maxID || b.ents.len() >= maxID-1 || b.rels.len() >= maxID,
		uint64(len(b.ents.blob))+uint64(entBytes) > math.MaxUint32,
		uint64(len(b.rels.blob))+uint64(relBytes) > math.MaxUint32:
		return fmt.Errorf("triple %d: %w", n, ErrTooLarge)
	}
	return nil
}

func (b *Builder) push(h, r, t int32) {
	b.heads = append(b.heads, h)
	b.rs = append(b.rs, r)
	b.tails = append(b.tails, t)
}

// Build returns the graph of the triples added so far, with exact duplicate
// triples dropped (Graph.Duplicates counts them). It fails with ErrEmpty when
// no triple was added, or with the first problem Add met. The Builder hands
// its storage to the Graph and is reset, ready to build another graph.
func (b *Builder) Build() (*Graph, error) {
	g, err := b.build(false)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// BuildAllowEmpty is Build, except that no triple is an empty graph rather
// than ErrEmpty: a question's neighbourhood fetched from a remote KG may
// be empty, and is still a graph to answer over (with nothing).
func (b *Builder) BuildAllowEmpty() (*Graph, error) { return b.build(true) }

// build is Build, optionally allowing an empty graph (RoG rows can have
// empty subgraphs, and a row is still worth reading for its question).
func (b *Builder) build(allowEmpty bool) (*Graph, error) {
	defer b.reset()
	if b.err != nil {
		return nil, b.err
	}
	if len(b.heads) == 0 && !allowEmpty {
		return nil, ErrEmpty
	}
	g := &Graph{
		ents: b.ents, relTab: b.rels,
		heads: b.heads, rels: b.rs, tails: b.tails,
	}
	g.index(g.ents.len(), g.relTab.len())
	g.ents.canonicalize()
	g.relTab.canonicalize()
	return g, nil
}

func (b *Builder) reset() {
	*b = Builder{ents: newNameTable(), rels: newNameTable()}
}

// index builds both CSR adjacencies for nE entities and nR relations, and
// removes exact duplicate triples (keeping the first), counting them.
func (g *Graph) index(nE, nR int) {
	nT := len(g.heads)
	// Most inputs hold no duplicates, so the in-CSR is built on another core
	// at the same time as the out-CSR, and rebuilt in the rare case that
	// duplicates are removed.
	inCSR := func() { g.inOff, g.inIdx = sortCSR(g.tails, g.rels, g.heads, nE, nR) }
	wait := goIfLarge(nT, inCSR)
	g.outOff, g.outIdx = sortCSR(g.heads, g.rels, g.tails, nE, nR)
	wait()
	// Sorted rows put identical triples next to each other, lowest id first.
	var dup []bool
	ndup := 0
	for e := 0; e < nE; e++ {
		row := g.outIdx[g.outOff[e]:g.outOff[e+1]]
		for k := 1; k < len(row); k++ {
			a, b := row[k-1], row[k]
			if g.rels[a] == g.rels[b] && g.tails[a] == g.tails[b] {
				if dup == nil {
					dup = make([]bool, nT)
				}
				dup[b] = true
				ndup++
			}
		}
	}
	if ndup > 0 {
		g.compact(dup, ndup)
		g.dups += ndup
		g.inOff, g.inIdx = sortCSR(g.tails, g.rels, g.heads, nE, nR)
	}
}

// compact removes the triples marked in dup, renumbering the rest in order,
// and rewrites the out-CSR to match (row order is unchanged).
func (g *Graph) compact(dup []bool, ndup int) {
	nT := len(g.heads)
	newID := make([]int32, nT)
	j := int32(0)
	for i := 0; i < nT; i++ {
		if dup[i] {
			newID[i] = -1
			continue
		}
		newID[i] = j
		g.heads[j], g.rels[j], g.tails[j] = g.heads[i], g.rels[i], g.tails[i]
		j++
	}
	keep := nT - ndup
	g.heads, g.rels, g.tails = g.heads[:keep:keep], g.rels[:keep:keep], g.tails[:keep:keep]
	w := int32(0)
	for e := 0; e+1 < len(g.outOff); e++ {
		start, end := g.outOff[e], g.outOff[e+1]
		g.outOff[e] = w
		for _, id := range g.outIdx[start:end] {
			if n := newID[id]; n >= 0 {
				g.outIdx[w] = n
				w++
			}
		}
	}
	g.outOff[len(g.outOff)-1] = w
	g.outIdx = g.outIdx[:w:w]
}

// sortCSR groups triple ids by key1 (row), each row sorted by (key2, key3)
// and then by id, with three stable counting-sort passes (least significant
// key first). That is linear in triples plus entities, and leaves ties in
// input order, so the result is deterministic. key1 and key3 range over
// the nE entities, key2 over the nR relations.
func sortCSR(key1, key2, key3 []int32, nE, nR int) (off, idx []int32) {
	n := len(key1)
	cnt := make([]int32, max(nE, nR)+1)
	tmp := make([]int32, n)
	idx = make([]int32, n)
	for i := range idx {
		tmp[i] = int32(i)
	}
	countingSort(idx, tmp, key3, cnt[:nE+1])
	countingSort(tmp, idx, key2, cnt[:nR+1])
	countingSort(idx, tmp, key1, cnt[:nE+1])
	off = make([]int32, nE+1)
	for _, id := range idx {
		off[key1[id]+1]++
	}
	for e := 0; e < nE; e++ {
		off[e+1] += off[e]
	}
	return off, idx
}

// countingSort stably writes src into dst ordered by key[id]; cnt (one
// longer than the key range) is used as scratch and left zeroed.
func countingSort(dst, src, key, cnt []int32) {
	for _, id := range src {
		cnt[key[id]+1]++
	}
	for i := 1; i < len(cnt); i++ {
		cnt[i] += cnt[i-1]
	}
	for _, id := range src {
		k := key[id]
		dst[cnt[k]] = id
		cnt[k]++
	}
	clear(cnt)
}

// parallelMin is the triple count from which loading work is split across
// two goroutines; below it (RoG rows, test graphs) a goroutine costs more
// than it saves.
const parallelMin = 1 << 15

// goIfLarge runs f on another goroutine when n is at least parallelMin, or
// right away otherwise. The returned function waits for f to finish.
func goIfLarge(n int, f func()) (wait func()) {
	if n < parallelMin {
		f()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return func() { <-done }
}
