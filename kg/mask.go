package kg

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
)

// MaskRelation is the opaque id a relation name is masked to: "r"
// followed by the low 32 bits of the FNV-1a 64-bit hash of the name, as 8
// hex digits ("children" -> "r" + 8 hex digits). It depends on the name
// alone, so the same relation gets the same id in every file and run.
// Text encoders see a masked id as an unknown word: nothing in it tells
// two relations' meanings apart.
func MaskRelation(name string) string {
	h := fnv.New64a()
	h.Write([]byte(name))
	return fmt.Sprintf("r%08x", uint32(h.Sum64()))
}

// WriteMaskedTSV writes g as a tab-separated triple file (head, relation,
// tail per line, the format ReadTSV reads) with every relation name
// replaced by MaskRelation's id. It returns the number of triples
// written. Two relations of g that mask to the same id are an error
// naming both, since the masked KG would merge them.
func WriteMaskedTSV(ctx context.Context, w io.Writer, g Reader) (int, error) {
	masks := make([]string, g.NumRelations())
	owner := map[string]string{}
	for r := range masks {
		name := g.RelationName(int32(r))
		m := MaskRelation(name)
		if o, ok := owner[m]; ok && o != name {
			return 0, fmt.Errorf("kg: mask relations: %q and %q both mask to %s", o, name, m)
		}
		owner[m], masks[r] = name, m
	}
	return writeTSV(ctx, w, g, masks, "mask relations")
}

// WriteTSV writes g as a tab-separated triple file (head, relation, tail
// per line, the format ReadTSV reads), in triple order. It returns the
// number of triples written. A name holding a tab or a newline is an
// error, since the file could not be read back as written.
func WriteTSV(ctx context.Context, w io.Writer, g Reader) (int, error) {
	rels := make([]string, g.NumRelations())
	for r := range rels {
		rels[r] = g.RelationName(int32(r))
		if strings.ContainsAny(rels[r], "\t\n") {
			return 0, fmt.Errorf("kg: write TSV: relation %q holds a tab or a newline", rels[r])
		}
	}
	return writeTSV(ctx, w, g, rels, "write TSV")
}

// writeTSV writes g's triples with rels[r] as relation r's name; op names
// the operation in errors.
func writeTSV(ctx context.Context, w io.Writer, g Reader, rels []string, op string) (int, error) {
	bw := bufio.NewWriter(w)
	n := g.NumTriples()
	for i := range n {
		if i%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return i, err
			}
		}
		t := g.Triple(int32(i))
		h, tl := g.EntityName(t.Head), g.EntityName(t.Tail)
		if strings.ContainsAny(h, "\t\n") || strings.ContainsAny(tl, "\t\n") {
			return i, fmt.Errorf("kg: %s: triple %d: an entity name holds a tab or a newline", op, i)
		}
		if _, err := fmt.Fprintf(bw, "%s\t%s\t%s\n", h, rels[t.Rel], tl); err != nil {
			return i, fmt.Errorf("kg: %s: %w", op, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("kg: %s: %w", op, err)
	}
	return n, nil
}

// CheckWriteName refuses a path whose extension WriteFile does not
// write, before any work: the error names path and the extensions it does.
func CheckWriteName(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".tsv", ".txt", ".nt", ".stemkg":
		return nil
	}
	return fmt.Errorf("%s: the extension says what is written: .tsv or .txt (tab-separated triples), .nt (N-Triples), .stemkg (snapshot)", path)
}

// WriteFile writes g to path atomically in the format path's extension
// names: .tsv or .txt a tab-separated triple file (WriteTSV), .nt
// N-Triples with names under base (WriteNTriples), .stemkg a snapshot
// (WriteSnapshot). Another extension is an error (CheckWriteName).
func WriteFile(ctx context.Context, path string, g *Graph, base string) error {
	if err := CheckWriteName(path); err != nil {
		return fmt.Errorf("kg: write %w", err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".stemkg" {
		return WriteSnapshot(path, g)
	}
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		var err error
		if ext == ".nt" {
			_, err = WriteNTriples(ctx, w, g, base)
		} else {
			_, err = WriteTSV(ctx, w, g)
		}
		return err
	})
}
