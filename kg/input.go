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

// prefetcher reads r ahead on its own goroutine, a few blocks at a time,
// so that decompression overlaps the reader's parsing.
type prefetcher struct {
	blocks chan prefetched
	free   chan []byte // blocks to fill again; there are prefetchBlocks
	blk    []byte      // the block being read from
	cur    []byte      // its unread bytes
	err    error
	done   chan struct{}
}

type prefetched struct {
	b   []byte
	err error
}

const (
	prefetchBlock  = 1 << 20
	prefetchBlocks = 4
)

func newPrefetcher(r io.Reader) *prefetcher {
	p := &prefetcher{blocks: make(chan prefetched, prefetchBlocks), free: make(chan []byte, prefetchBlocks), done: make(chan struct{})}
	for range prefetchBlocks {
		p.free <- make([]byte, prefetchBlock)
	}
	go func() {
		defer close(p.blocks)
		for {
			var buf []byte
			select {
			case buf = <-p.free:
			case <-p.done:
				return
			}
			n, err := io.ReadFull(r, buf)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			select {
			case p.blocks <- prefetched{buf[:n], err}:
			case <-p.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *prefetcher) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.blk != nil {
			p.free <- p.blk[:cap(p.blk)] // never blocks: free holds every block
			p.blk = nil
		}
		if p.err != nil {
			return 0, p.err
		}
		blk, ok := <-p.blocks
		if !ok {
			return 0, io.EOF
		}
		p.blk, p.cur, p.err = blk.b, blk.b, blk.err
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// close stops the goroutine.
func (p *prefetcher) close() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}
