// Package backends lists the KG backends stem ships, in one place: kg's own
// file formats (tsv, pipe, nt, freebase, snapshot, read into memory) and the SPARQL
// endpoint (kg/sparql). It is the only package that imports a backend
// beyond kg: every command opens its --kg with Default().Open, which picks
// the backend by URL scheme or file format, and reads the backends'
// settings (Default().NewSettings) as flags, --config keys and stem compare
// keys. Adding a backend is its package plus one line in Default.
package backends

import (
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
)

// Default returns the registry of every KG backend stem ships.
func Default() *kg.Registry {
	r := kg.FileBackends()
	// Registering fixed, distinct names cannot fail.
	_ = kg.RegisterWith(r, sparql.Backend(), sparql.DefaultSettings, sparql.Connect)
	return r
}
