package settings

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mode is an enum-like setting that parses itself.
type mode string

func (m *mode) UnmarshalText(b []byte) error {
	switch s := string(b); s {
	case "fast", "slow":
		*m = mode(s)
		return nil
	}
	return fmt.Errorf("want fast or slow")
}

type inner struct {
	Theta float32 `flag:"theta" min:"0" max:"1" usage:"a threshold"`
	Skip  int     // untagged: not a setting
}

type testSettings struct {
	Name   string        `flag:"name-of" usage:"a name"`
	Beam   int           `flag:"beam" min:"1"`
	On     bool          `flag:"on"`
	Rate   float64       `flag:"rate"`
	Seed   uint64        `flag:"seed"`
	Wait   time.Duration `flag:"wait"`
	Files  []string      `flag:"files"`
	Mode   mode          `flag:"mode"`
	Hidden int           `flag:"-"`
	Inner  inner
}

func defaults() testSettings {
	return testSettings{Beam: 4, Mode: "fast", Inner: inner{Theta: 0.6}}
}

func TestFields(t *testing.T) {
	s := defaults()
	fs, err := Fields(&s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	want := []string{"name-of", "beam", "on", "rate", "seed", "wait", "files", "mode", "theta"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if _, err := Fields(s); err == nil {
		t.Error("a struct value (not a pointer) was accepted")
	}
	type dup struct {
		A int `flag:"x"`
		B int `flag:"x"`
	}
	if _, err := Fields(&dup{}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("duplicate names: err = %v", err)
	}
	type bad struct {
		M map[string]int `flag:"m"`
	}
	if _, err := Fields(&bad{}); err == nil {
		t.Error("a map setting was accepted")
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name, value string
		check       func(testSettings) bool
		err         string
	}{
		{"name-of", " x y ", func(s testSettings) bool { return s.Name == "x y" }, ""},
		{"beam", "1000000", func(s testSettings) bool { return s.Beam == 1000000 }, ""},
		{"beam", "1e6", func(s testSettings) bool { return s.Beam == 1000000 }, ""},
		{"beam", "0", nil, `beam "0": want a number of at least 1`},
		{"beam", "2.5", nil, `beam "2.5": want a whole number`},
		{"beam", "many", nil, "want a whole number"},
		{"on", "true", func(s testSettings) bool { return s.On }, ""},
		{"on", "maybe", nil, "want true or false"},
		{"rate", "NaN", nil, "want a finite number"},
		{"rate", "-0.25", func(s testSettings) bool { return s.Rate == -0.25 }, ""},
		{"seed", "-1", nil, "at least 0"},
		{"seed", "7", func(s testSettings) bool { return s.Seed == 7 }, ""},
		{"wait", "1m30s", func(s testSettings) bool { return s.Wait == 90*time.Second }, ""},
		{"wait", "-1s", nil, "at least 0"},
		{"files", "a, b,,c", func(s testSettings) bool { return reflect.DeepEqual(s.Files, []string{"a", "b", "c"}) }, ""},
		{"mode", "slow", func(s testSettings) bool { return s.Mode == "slow" }, ""},
		{"mode", "medium", nil, `mode "medium": want fast or slow`},
		{"theta", "0.7", func(s testSettings) bool { return s.Inner.Theta == 0.7 }, ""},
		{"theta", "1.5", nil, "want a number from 0 to 1"},
	}
	for _, tc := range tests {
		s := defaults()
		fs, _ := Fields(&s)
		f, ok := Lookup(fs, tc.name)
		if !ok {
			t.Fatalf("no setting %q", tc.name)
		}
		err := f.Set(tc.value)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Set(%s, %q): err = %v, want %q", tc.name, tc.value, err, tc.err)
		case tc.err == "" && (err != nil || !tc.check(s)):
			t.Errorf("Set(%s, %q) = %+v, %v", tc.name, tc.value, s, err)
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	s := defaults()
	fs, _ := Fields(&s)
	given := map[string]bool{"beam": true}
	err := DecodeJSON(fs, []byte(`{"beam": 9, "rate": 1000000, "on": true, "files": ["x", "y"], "mode": "slow", "wait": "2s", "theta": 0.5}`), "c.json", func(k string) bool { return given[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := testSettings{Beam: 4, Rate: 1e6, On: true, Files: []string{"x", "y"}, Mode: "slow", Wait: 2 * time.Second, Inner: inner{Theta: 0.5}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("decoded %+v, want %+v (beam was given on the command line)", s, want)
	}
	for _, tc := range []struct{ json, want string }{
		{`{"bema": 3}`, `"bema" is not a setting of this command (did you mean "beam"?)`},
		{`{"beam": "x"}`, `c.json: beam "x": want a whole number`},
		{`{"beam": {"a": 1}}`, "want a whole number"},
		{`{"files": [1, 2]}`, "strings only"},
		{`[1]`, "want a JSON object"},
		{`{"mode": 3}`, `mode "3": want fast or slow`},
	} {
		s := defaults()
		fs, _ := Fields(&s)
		if err := DecodeJSON(fs, []byte(tc.json), "c.json", nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeJSON(%s): err = %v, want %q", tc.json, err, tc.want)
		}
	}
}

func TestApplySpec(t *testing.T) {
	s := defaults()
	fs, _ := Fields(&s)
	name, err := ApplySpec(fs, "name=row, on ,beam=8,mode=slow")
	if err != nil || name != "row" || !s.On || s.Beam != 8 || s.Mode != "slow" {
		t.Errorf("ApplySpec = %q, %v, %+v", name, err, s)
	}
	for _, tc := range []struct{ spec, want string }{
		{"beam", "beam needs a value"},
		{"name", "name needs a value"},
		{"bem=2", `did you mean "beam"`},
		{"on=maybe", `on "maybe": want true or false`},
	} {
		s := defaults()
		fs, _ := Fields(&s)
		if _, err := ApplySpec(fs, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ApplySpec(%q): err = %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestAppendAndValues(t *testing.T) {
	s := defaults()
	fs, _ := Fields(&s)
	f, _ := Lookup(fs, "files")
	if err := f.Set("a"); err != nil {
		t.Fatal(err)
	}
	if err := f.Append("b,c"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Files, []string{"a", "b", "c"}) {
		t.Errorf("files = %v", s.Files)
	}
	v := Values(fs)
	if v["files"] != "a,b,c" || v["beam"] != "4" || v["theta"] != "0.6" || v["wait"] != "0s" || v["mode"] != "fast" {
		t.Errorf("values = %v", v)
	}
}

// FuzzSpec feeds arbitrary compare specs: ApplySpec must not panic, and
// every value a setting holds must read back to itself through String.
func FuzzSpec(f *testing.F) {
	for _, s := range []string{"name=a,beam=2", "on", "theta=0.3,mode=slow", "wait=1s,files=x", "beam=1e3,rate=-1", ",,=,", "name==x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s := defaults()
		fs, _ := Fields(&s)
		if _, err := ApplySpec(fs, spec); err != nil {
			return
		}
		before := s
		for _, fl := range fs {
			if fl.IsList() {
				continue
			}
			if err := fl.Set(fl.String()); err != nil {
				t.Fatalf("%s: its own value %q does not read back: %v", fl.Name, fl.String(), err)
			}
		}
		if !reflect.DeepEqual(s, before) {
			t.Fatalf("round trip changed %+v into %+v", before, s)
		}
	})
}

// plugins holds settings structs that only exist at run time, as a
// registry's per-plugin settings do.
type plugins struct{ ptrs []any }

func (p plugins) Structs() []any { return p.ptrs }

type pluginA struct {
	K int `flag:"a-k"`
}

type pluginB struct {
	On bool `flag:"b-on"`
}

// A Nested field's structs are walked as if embedded: their fields are
// settings, set through the shared pointers, and a name clash with the
// holder is an error as any other.
func TestNested(t *testing.T) {
	a, b := &pluginA{K: 3}, &pluginB{}
	s := struct {
		Beam    int `flag:"beam"`
		Plugins plugins
	}{Beam: 4, Plugins: plugins{[]any{a, b}}}
	fs, err := Fields(&s)
	if err != nil {
		t.Fatal(err)
	}
	if got := Names(fs); !reflect.DeepEqual(got, []string{"a-k", "b-on", "beam"}) {
		t.Fatalf("names = %v", got)
	}
	if _, err := ApplySpec(fs, "a-k=7,b-on"); err != nil {
		t.Fatal(err)
	}
	if a.K != 7 || !b.On {
		t.Errorf("plugin settings = %+v %+v, want 7 and true", *a, *b)
	}
	clash := struct {
		K       int `flag:"a-k"`
		Plugins plugins
	}{Plugins: plugins{[]any{a}}}
	if _, err := Fields(&clash); err == nil || !strings.Contains(err.Error(), `"a-k"`) {
		t.Errorf("clash: err = %v", err)
	}
	bad := struct{ Plugins plugins }{plugins{[]any{pluginA{}}}}
	if _, err := Fields(&bad); err == nil || !strings.Contains(err.Error(), "want a pointer to a struct") {
		t.Errorf("a struct value: err = %v", err)
	}
}

// helped is a setting whose help is written at run time.
type helped string

func (helped) Usage() string { return "one of " + strings.Join([]string{"a", "b"}, ", ") }

func TestUsager(t *testing.T) {
	var s struct {
		Plain  helped `flag:"plain"`
		Tagged helped `flag:"tagged" usage:"the tag's words"`
	}
	fs, err := Fields(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"plain": "one of a, b", "tagged": "the tag's words"}
	for _, f := range fs {
		if f.Usage != want[f.Name] {
			t.Errorf("%s: usage %q, want %q", f.Name, f.Usage, want[f.Name])
		}
	}
}
