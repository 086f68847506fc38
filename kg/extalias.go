package kg

import (
	"encoding/binary"
	"io"
	"unsafe"
)

// i32u views int32s as uint32s.
func i32u(s []int32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// writeWords writes words little-endian.
func writeWords(w io.Writer, s []uint32) {
	if littleEndian() {
		w.Write(wordView(s))
		return
	}
	var b [4]byte
	for _, v := range s {
		binary.LittleEndian.PutUint32(b[:], v)
		w.Write(b[:])
	}
}

// extAliases are the alias sections of a snapshot being built: their
// scratch files, in layout order (aliasOff, aliasBlob, aliasEnt,
// aliasSlots, aliasOff2, aliasIDs), and their counts.
type extAliases struct {
	files                                []string
	nAlias, bytes, groups, ids, slotsLen int
}

// emptyAliases writes the alias sections of a KG without aliases.
func (b *extBuild) emptyAliases() error {
	x := newAliasIndex(nil)
	return b.aliasFiles(&x)
}

// aliasFiles writes the alias sections of x to scratch files.
func (b *extBuild) aliasFiles(x *aliasIndex) error {
	a := &b.aliases
	a.nAlias, a.bytes, a.groups, a.ids, a.slotsLen = x.len(), len(x.tab.blob), x.norm.groups(), len(x.norm.ids), len(x.norm.slots)
	for i, write := range []func(io.Writer){
		func(w io.Writer) { writeWords(w, x.tab.off) },
		func(w io.Writer) { w.Write(x.tab.blob) },
		func(w io.Writer) { writeWords(w, i32u(x.ent)) },
		func(w io.Writer) { writeWords(w, i32u(x.norm.slots)) },
		func(w io.Writer) { writeWords(w, i32u(x.norm.off)) },
		func(w io.Writer) { writeWords(w, i32u(x.norm.ids)) },
	} {
		f, err := createTemp(b.dir, "alias-"+string(rune('a'+i)))
		if err != nil {
			return err
		}
		write(f.w)
		if err := f.finish(); err != nil {
			return err
		}
		a.files = append(a.files, f.name)
	}
	return nil
}
