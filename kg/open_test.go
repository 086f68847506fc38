package kg

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/settings"
)

// Open reads every file format as Load does, choosing the backend by
// magic bytes, extension or first line, or by the format given.
func TestRegistryOpenFiles(t *testing.T) {
	g := build(t, "a r b", "b s c")
	snap := filepath.Join(t.TempDir(), "g.stemkg")
	if err := WriteSnapshot(snap, g); err != nil {
		t.Fatal(err)
	}
	want, r := allTriples(g), FileBackends()
	for _, tt := range []struct {
		name, path string
		format     Format
		backend    string
	}{
		{"tsv by first line", write(t, "kb.txt", "a\tr\tb\nb\ts\tc\n"), FormatAuto, "tsv"},
		{"pipe by first line", write(t, "kb.txt", "a|r|b\nb|s|c\n"), "", "pipe"},
		{"nt by extension", write(t, "kb.nt", "<a> <r> <b> .\n<b> <s> <c> .\n"), FormatAuto, "nt"},
		{"snapshot by magic", snap, FormatAuto, "snapshot"},
		{"format given", write(t, "x.nt", "a\tr\tb\nb\ts\tc\n"), FormatTSV, "tsv"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := OpenOptions{Format: tt.format}
			b, err := r.Choose(tt.path, o)
			if err != nil || b.Name != tt.backend {
				t.Fatalf("Choose = %q, %v; want %q", b.Name, err, tt.backend)
			}
			g, err := r.Load(context.Background(), tt.path, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := allTriples(g); !slices.Equal(got, want) {
				t.Errorf("triples = %q, want %q", got, want)
			}
		})
	}
}

// fakeSettings is a backend's own settings struct, as package settings
// reads it.
type fakeSettings struct {
	Page int `flag:"fake-page" min:"1" usage:"rows per page"`
}

// fake is a remote KG: a Graph behind a scheme, remembering the settings
// it was opened with.
type fake struct {
	*Graph
	page int
}

func fakeRegistry(t *testing.T) *Registry {
	t.Helper()
	r := FileBackends()
	g := build(t, "a r b")
	err := RegisterWith(r, Backend{Name: "fake", Doc: "a test server", Schemes: []string{"mem", "mems"}},
		func() fakeSettings { return fakeSettings{Page: 10} },
		func(ctx context.Context, spec string, s fakeSettings) (Reader, error) { return fake{g, s.Page}, nil })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A backend's settings are read as flags and keys, and reach its opener.
func TestRegistrySettings(t *testing.T) {
	ctx := context.Background()
	r := fakeRegistry(t)
	rd, err := r.Open(ctx, "mem://x", OpenOptions{})
	if err != nil || rd.(fake).page != 10 {
		t.Fatalf("Open with no settings = %v, %v; want the defaults (page 10)", rd, err)
	}
	s := r.NewSettings()
	holder := struct{ KG BackendSettings }{s}
	fields, err := settings.Fields(&holder)
	if err != nil {
		t.Fatal(err)
	}
	if got := settings.Names(fields); !slices.Equal(got, []string{"fake-page"}) {
		t.Fatalf("settings = %q, want [fake-page]", got)
	}
	if _, err := settings.ApplySpec(fields, "fake-page=500"); err != nil {
		t.Fatal(err)
	}
	if rd, err = r.Open(ctx, "MEMS://x", OpenOptions{Settings: s}); err != nil || rd.(fake).page != 500 {
		t.Fatalf("Open = %v, %v; want page 500 from the settings", rd, err)
	}
	if c := s.Clone(); !reflect.DeepEqual(c.Of("fake"), s.Of("fake")) || c.Of("fake") == s.Of("fake") {
		t.Errorf("Clone: want equal values in other structs")
	}
	if _, err := r.Load(ctx, "mem://x", OpenOptions{}); err == nil || !strings.Contains(err.Error(), "needs the KG in memory, and a fake KG is read over the network") {
		t.Errorf("Load of a remote KG: err = %v", err)
	}
}

func TestRegistryErrors(t *testing.T) {
	ctx := context.Background()
	r := fakeRegistry(t)
	missing := filepath.Join(t.TempDir(), "missing.txt")
	for _, tt := range []struct {
		name, spec string
		format     Format
		wantErr    error
		msg        string
	}{
		{"unknown scheme", "memz://x", "", nil, `kg: open memz://x: unknown URL scheme "memz" (have mem, mems); did you mean "mem"?`},
		{"no spec", "", "", nil, "no KG named"},
		{"missing file", missing, "", fs.ErrNotExist, "load KG: open " + missing},
		{"unknown format", write(t, "kb.txt", "a|r|b\n"), Format("csv"), ErrUnknownFormat, `unknown KG format "csv" (valid: auto`},
		{"rog refused", write(t, "kb.txt", "a|r|b\n"), FormatRoG, nil, "read it with kg.ReadRoG"},
		{"undetectable", write(t, "kb.txt", "just words\n"), "", ErrUnknownFormat, `cannot detect the format from the first line "just words"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Open(ctx, tt.spec, OpenOptions{Format: tt.format})
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.msg)
			}
		})
	}
	if _, err := r.Lookup("fak"); err == nil || !strings.Contains(err.Error(), `did you mean "fake"?`) {
		t.Errorf("Lookup(fak) err = %v", err)
	}
	open := func(context.Context, string) (Reader, error) { return nil, nil }
	for _, tt := range []struct {
		b   Backend
		msg string
	}{
		{Backend{Name: "fake", Schemes: []string{"x"}}, `"fake" is registered twice`},
		{Backend{Name: "other", Schemes: []string{"mem"}}, `scheme mem:// is served by "fake" already`},
		{Backend{Name: "other", Formats: []Format{FormatTSV}}, `format "tsv" is read by "tsv" already`},
		{Backend{Name: "Other", Schemes: []string{"y"}}, "want a lowercase word"},
		{Backend{Name: "other"}, "serves no scheme and reads no format"},
		{Backend{Name: "other", Schemes: []string{"y://"}}, "without"},
	} {
		if err := r.Register(tt.b, open); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Register(%+v) err = %v, want one containing %q", tt.b, err, tt.msg)
		}
	}
}

func TestScheme(t *testing.T) {
	for spec, want := range map[string]string{
		"http://h:8890/sparql": "http", "HTTPS://h/": "https", "kb.txt": "", "/data/kb.txt": "", "C://kb.txt": "",
		"git+ssh://h": "git+ssh", "1x://h": "", "a b://h": "", "": "", "dir/http://x": "",
	} {
		if got := Scheme(spec); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", spec, got, want)
		}
	}
	if !IsPath("kb.txt") || IsPath("http://h/sparql") || IsPath("") {
		t.Error("IsPath: want true for a file only")
	}
}

func TestOptionalCapabilities(t *testing.T) {
	g := build(t, "a r b", "b r c")
	if err := Err(g); err != nil {
		t.Errorf("Err(graph) = %v", err)
	}
	st, err := Describe(context.Background(), g, 3)
	if err != nil || st.Triples != 2 {
		t.Errorf("Describe(graph) = %+v, %v; want 2 triples", st, err)
	}
}
