package kg

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/settings"
)

// Backend describes one registered way of opening a KG: a file format read
// into memory, or a kind of server read over the network. A spec (what
// --kg holds) reaches a backend by its URL scheme ("http://…" for a
// SPARQL endpoint) or, for a file, by its format: the one --format names,
// or the one DetectFormat finds from the file's magic bytes, extension and
// first line.
type Backend struct {
	// Name is a lowercase word ("tsv", "sparql").
	Name string
	// Doc is a line for help text.
	Doc string
	// Schemes are the URL schemes the backend serves, lowercase, without
	// "://" ("http", "https").
	Schemes []string
	// Formats are the file formats the backend reads.
	Formats []Format
}

// openFunc opens the KG spec names with a backend's settings (the pointer
// the backend's defaults function returned, or nil for a backend without
// settings).
type openFunc func(ctx context.Context, spec string, settings any) (Reader, error)

// Registry finds KG backends by scheme and format. Like plan.Registry it is
// a value built in one place (package kg/backends lists the built-ins) and
// passed where it is needed: no init-time registration, no global map. A
// backend registered with RegisterWith brings a settings struct of its own
// (SPARQL's graph IRI, page size, timeouts), which NewSettings collects
// for the commands' flags, --config files and stem compare keys.
type Registry struct {
	names   []string
	entries map[string]backendEntry
}

type backendEntry struct {
	Backend
	settings func() any // nil for a backend without settings
	open     openFunc
}

// FileBackends returns a registry of kg's own file formats, read into
// memory by Load: tsv, pipe, nt, freebase and snapshot. kg/backends adds the
// servers on top of it.
func FileBackends() *Registry {
	r := &Registry{}
	for _, b := range []Backend{
		{Name: string(FormatTSV), Doc: "head<TAB>relation<TAB>tail lines (PathQuestion's KBs), in memory", Formats: []Format{FormatTSV}},
		{Name: string(FormatPipe), Doc: "head|relation|tail lines (MetaQA's kb.txt), in memory", Formats: []Format{FormatPipe}},
		{Name: string(FormatNTriples), Doc: "N-Triples, any RDF KG (labels as names, relations by local name), in memory", Formats: []Format{FormatNTriples}},
		{Name: string(FormatFreebase), Doc: "Google's Freebase dump as downloaded, cleaned as FilterEnglishTriplets.py cleans it, in memory (stem kg build makes a snapshot of it in bounded memory)", Formats: []Format{FormatFreebase}},
		{Name: string(FormatSnapshot), Doc: "stem's binary snapshot (stem kg build), mapped into memory", Formats: []Format{FormatSnapshot}},
	} {
		// Registering fixed, distinct names cannot fail.
		_ = r.Register(b, loader(b.Formats[0]))
	}
	return r
}

// loader opens a file of format f into memory.
func loader(f Format) func(ctx context.Context, path string) (Reader, error) {
	return func(ctx context.Context, path string) (Reader, error) {
		g, err := Load(ctx, path, f)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
}

// Register adds a backend without settings of its own. A name, scheme or
// format already registered is an error.
func (r *Registry) Register(b Backend, open func(ctx context.Context, spec string) (Reader, error)) error {
	if open == nil {
		return fmt.Errorf("kg backend %q: no opener", b.Name)
	}
	return r.add(backendEntry{Backend: b, open: func(ctx context.Context, spec string, _ any) (Reader, error) { return open(ctx, spec) }})
}

// RegisterWith adds a backend with a settings struct S of its own: a
// struct of tagged fields (package settings), whose flags, --config keys
// and stem compare keys then exist wherever the KG's settings are read.
// defaults returns S's defaults; open opens spec with the values the user
// set.
func RegisterWith[S any](r *Registry, b Backend, defaults func() S, open func(ctx context.Context, spec string, s S) (Reader, error)) error {
	if open == nil || defaults == nil {
		return fmt.Errorf("kg backend %q: no opener or no defaults", b.Name)
	}
	newPtr, value := settings.Typed(defaults)
	return r.add(backendEntry{Backend: b, settings: newPtr,
		open: func(ctx context.Context, spec string, v any) (Reader, error) { return open(ctx, spec, value(v)) }})
}

func (r *Registry) add(e backendEntry) error {
	if e.Name == "" || strings.ToLower(e.Name) != e.Name || strings.ContainsAny(e.Name, " ,:/") {
		return fmt.Errorf("kg backend name %q: want a lowercase word", e.Name)
	}
	if len(e.Schemes) == 0 && len(e.Formats) == 0 {
		return fmt.Errorf("kg backend %q: it serves no scheme and reads no format", e.Name)
	}
	if _, ok := r.entries[e.Name]; ok {
		return fmt.Errorf("kg backend %q is registered twice", e.Name)
	}
	for _, s := range e.Schemes {
		if s == "" || strings.ToLower(s) != s || strings.Contains(s, ":") {
			return fmt.Errorf("kg backend %q: scheme %q: want a lowercase scheme without \"://\"", e.Name, s)
		}
		if other, ok := r.byScheme(s); ok {
			return fmt.Errorf("kg backend %q: scheme %s:// is served by %q already", e.Name, s, other.Name)
		}
	}
	for _, f := range e.Formats {
		if other, ok := r.byFormat(f); ok {
			return fmt.Errorf("kg backend %q: format %q is read by %q already", e.Name, f, other.Name)
		}
	}
	if r.entries == nil {
		r.entries = map[string]backendEntry{}
	}
	r.names = append(r.names, e.Name)
	r.entries[e.Name] = e
	return nil
}

func (r *Registry) byScheme(s string) (backendEntry, bool) {
	for _, n := range r.names {
		if slices.Contains(r.entries[n].Schemes, s) {
			return r.entries[n], true
		}
	}
	return backendEntry{}, false
}

func (r *Registry) byFormat(f Format) (backendEntry, bool) {
	for _, n := range r.names {
		if slices.Contains(r.entries[n].Formats, f) {
			return r.entries[n], true
		}
	}
	return backendEntry{}, false
}

// Names lists the registered backends in registration order.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Lookup returns the backend registered as name, with an error that lists
// the backends and suggests the nearest name.
func (r *Registry) Lookup(name string) (Backend, error) {
	if e, ok := r.entries[name]; ok {
		return e.Backend, nil
	}
	return Backend{}, unknownName("KG backend", name, r.names)
}

// BackendSettings holds the registered backends' own settings structs
// (Registry.NewSettings); its zero value holds none, and every backend
// then opens with its defaults. A field of this type in a command's
// options brings the backends' flags in (package settings walks it).
type BackendSettings = settings.Plugins

// NewSettings returns the defaults of every backend that has settings.
func (r *Registry) NewSettings() BackendSettings {
	return settings.NewPlugins(r.names, func(n string) func() any { return r.entries[n].settings })
}

// OpenOptions say how Open reads a spec.
type OpenOptions struct {
	// Format is a file's format; "" or FormatAuto detects it
	// (DetectFormat). A spec with a URL scheme ignores it.
	Format Format
	// Settings are the backends' settings (NewSettings); a backend
	// without its struct here opens with its defaults.
	Settings BackendSettings
}

// Choose returns the backend that opens spec: by its URL scheme, else by
// the file's format (o.Format, or detected from the file).
func (r *Registry) Choose(spec string, o OpenOptions) (Backend, error) {
	e, err := r.choose(spec, o)
	return e.Backend, err
}

func (r *Registry) choose(spec string, o OpenOptions) (backendEntry, error) {
	if spec == "" {
		return backendEntry{}, errors.New("kg: no KG named (want a file or a URL)")
	}
	if s := Scheme(spec); s != "" {
		if e, ok := r.byScheme(s); ok {
			return e, nil
		}
		var have []string
		for _, n := range r.names {
			have = append(have, r.entries[n].Schemes...)
		}
		return backendEntry{}, fmt.Errorf("kg: open %s: %w", spec, unknownName("URL scheme", s, have))
	}
	f := o.Format
	if f == "" || f == FormatAuto {
		var err error
		if f, err = DetectFormat(spec); err != nil {
			return backendEntry{}, err
		}
	}
	if f == FormatRoG {
		return backendEntry{}, rogRefused(spec)
	}
	if e, ok := r.byFormat(f); ok {
		return e, nil
	}
	if !slices.Contains(formats, f) {
		return backendEntry{}, fmt.Errorf("load %s: %w", spec, unknownFormat(string(f)))
	}
	return backendEntry{}, fmt.Errorf("load %s: %w: no KG backend reads format %q", spec, ErrUnknownFormat, f)
}

// Open opens the KG spec names: a file (read into memory by the backend of
// its format) or a URL (served by the backend of its scheme). Errors name
// the spec; an unknown scheme or name suggests the nearest one.
func (r *Registry) Open(ctx context.Context, spec string, o OpenOptions) (Reader, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", spec, err)
	}
	e, err := r.choose(spec, o)
	if err != nil {
		return nil, err
	}
	var s any
	if e.settings != nil {
		if s = o.Settings.Of(e.Name); s == nil {
			s = e.settings()
		}
	}
	return e.open(ctx, spec, s)
}

// Opener returns Open with o fixed, for a library that is given a way to
// open the KGs it is named (benchmark.Load) rather than a registry.
func (r *Registry) Opener(o OpenOptions) func(ctx context.Context, spec string) (Reader, error) {
	return func(ctx context.Context, spec string) (Reader, error) { return r.Open(ctx, spec, o) }
}

// Load is Open for a caller that needs the whole KG in memory (an entity
// index over every entity, training, a rewrite of the file): a spec
// served remotely is refused with an error that says so.
func (r *Registry) Load(ctx context.Context, spec string, o OpenOptions) (*Graph, error) {
	if e, err := r.choose(spec, o); err == nil && len(e.Schemes) > 0 {
		return nil, fmt.Errorf("%s: this needs the KG in memory, and a %s KG is read over the network: give a KG file", spec, e.Name)
	}
	rd, err := r.Open(ctx, spec, o)
	if err != nil {
		return nil, err
	}
	if g, ok := rd.(*Graph); ok {
		return g, nil
	}
	return nil, fmt.Errorf("%s: this needs the KG in memory: give a KG file", spec)
}

// Scheme returns the lowercased URL scheme of spec ("http" for
// "http://host/sparql"), or "" when spec is a file path.
func Scheme(spec string) string {
	i := strings.Index(spec, "://")
	if i < 2 { // "C://" is a drive, not a scheme
		return ""
	}
	for j, c := range spec[:i] {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(spec[:i])
}

// IsPath reports whether spec names a file rather than a URL: a file is
// made absolute to be recorded, checked to exist, and never overwritten
// by an output.
func IsPath(spec string) bool { return spec != "" && Scheme(spec) == "" }

// DetectFormat finds the format of the file at path as Load does with
// FormatAuto: a snapshot by its magic bytes, N-Triples by a .nt extension
// or a first line shaped like a triple, and otherwise TSV or pipe by
// whether the first data line holds a tab or a '|'.
func DetectFormat(path string) (Format, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("load KG: %w", err)
	}
	defer file.Close()
	return detect(bufio.NewReaderSize(file, 256<<10), path)
}

// rogRefused is the error for a RoG file given as a KG.
func rogRefused(path string) error {
	return fmt.Errorf("load %s: a RoG file holds one KG per row: read it with kg.ReadRoG", path)
}

// unknownName is the error for a name that is not one of have, suggesting
// the nearest.
func unknownName(what, name string, have []string) error {
	msg := fmt.Sprintf("unknown %s %q (have %s)", what, name, strings.Join(have, ", "))
	if best := settings.Nearest(name, have); best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return errors.New(msg)
}

// Optional capabilities of an opened KG that the commands report through,
// found by type assertion so that no caller names the backend.
type (
	// Failer is implemented by a Reader whose methods meet errors they
	// cannot return (a remote KG answers a failed fetch as no edges): Err
	// returns the first.
	Failer interface{ Err() error }
	// Reporter is implemented by a backend that counts what a run cost it
	// (a remote KG's queries): Report says so in a line, per question of
	// the questions answered.
	Reporter interface{ Report(questions int) string }
	// Describer is implemented by a backend that counts a KG it does not
	// hold (Stats.NoDegree where degrees would scan every entity).
	Describer interface {
		Describe(ctx context.Context, top int) (Stats, error)
	}
)

// Err returns r's kept failure (Failer), nil for a Reader that cannot fail.
func Err(r Reader) error {
	if f, ok := r.(Failer); ok {
		return f.Err()
	}
	return nil
}

// Describe returns r's statistics with its top relations: counted in
// memory for a Graph, by the backend for a Describer.
func Describe(ctx context.Context, r Reader, top int) (Stats, error) {
	switch g := r.(type) {
	case Describer:
		return g.Describe(ctx, top)
	case *Graph:
		return g.Stats(top), nil
	}
	return Stats{}, fmt.Errorf("kg: a %T cannot be described", r)
}
