//go:build !linux

package kg

import "os"

// mapFile reads path into memory; DecodeSnapshot then uses the bytes in
// place, as it does a mapping on Linux.
func mapFile(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}

// dropCached does nothing here: the snapshot is read, not mapped.
func dropCached(string) {}
