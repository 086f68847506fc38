package kg

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
)

// Compressed inputs are recognised by their first bytes, not their names:
// gzip (1f 8b, as Google's Freebase dump freebase-rdf-latest.gz ships,
// several members or one) and bzip2 ("BZh", as Wikidata's dumps ship).
// Both readers are the standard library's; zstd would need a dependency
// that no KG dump the field uses asks for.

// innerName is name without a .gz, .bz2 or .bzip2 suffix, so that the
// inner extension (kb.nt.gz is .nt) still chooses the format.
func innerName(name string) string {
	for _, ext := range []string{".gz", ".bz2", ".bzip2"} {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// decompress returns br, or a decompressing reader over it when it holds
// gzip or bzip2 data; compressed says which.
func decompress(br *bufio.Reader, name string) (r io.Reader, compressed bool, err error) {
	head, err := br.Peek(10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, false, fmt.Errorf("load %s: %w", name, err)
	}
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, fmt.Errorf("load %s: gzip: %w", name, err)
		}
		return zr, true, nil
	case len(head) == 10 && bytes.HasPrefix(head, []byte("BZh")) && '1' <= head[3] && head[3] <= '9' &&
		(bytes.Equal(head[4:], []byte("\x31\x41\x59\x26\x53\x59")) || bytes.Equal(head[4:], []byte("\x17\x72\x45\x38\x50\x90"))):
		// "BZh", the block size, then a block's or the end's magic: a
		// text file starting "BZh" is left alone.
		return bzip2.NewReader(br), true, nil
	}
	return br, false, nil
}
