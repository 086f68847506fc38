// Package settings reads configuration into one typed struct from every
// place a user writes it: command-line flags, `--config` JSON files, and
// `stem compare`'s KEY=VALUE lists. A struct field is a setting when it has
// a `flag` tag naming it; the tag `usage` explains it, `category` groups it
// in help text, and `min`/`max` bound a number. Nested structs without a
// flag tag are walked, so a stage's own settings (tracing.Config) sit in the
// pipeline's settings as one field; a field implementing Nested brings in
// structs known only at run time (each registered retrieval strategy's).
//
// Values are parsed by the field's type: string, bool, int, uint64,
// float32, float64, time.Duration, []string (comma-separated), or any type
// implementing encoding.TextUnmarshaler, which is how enum-like settings
// parse and reject their own values. Adding a setting is adding a tagged
// field: flags, config keys and compare keys follow from it. ParseBytes reads
// the sizes such settings take as text ("2GiB", stem kg build's --max-memory).
package settings

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/samber/lo"
	"github.com/stem-kgqa/stem/internal/editdist"
)

// Field is one setting of a struct: a view of the struct's field, so that
// setting it writes into the struct.
type Field struct {
	// Name is the flag name, also the key in config files and specs.
	Name     string
	Usage    string
	Category string
	// Placeholder names the value in help text ("FILE", "MODEL"); from the
	// tag `placeholder`.
	Placeholder string
	v           reflect.Value
	min, max    *float64
}

// Nested is implemented by a field that holds settings structs reflection
// cannot reach through the field's type: a registry's settings, one struct
// per plugin registered at run time (plan.StrategySettings). Fields walks
// each struct Structs points to as if it were embedded, so its tagged
// fields become flags, config keys and compare keys like any other. The
// pointers are shared, not copied: a caller that copies the holding struct
// and sets fields in the copy must clone the holder first.
type Nested interface {
	Structs() []any
}

// Usager is implemented by a setting's type whose help is written at run
// time rather than in a `usage` tag: a name looked up in a registry
// (plan.PlannerName), whose help lists what the registry holds. A
// `usage` tag, when present, wins.
type Usager interface {
	Usage() string
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// Fields returns the settings of the struct ptr points to, in field order.
// It is an error for ptr not to point to a struct, for a tagged field to
// have a type Set cannot parse, or for two fields to share a name.
func Fields(ptr any) ([]Field, error) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("settings: want a pointer to a struct, got %T", ptr)
	}
	var out []Field
	if err := walk(v.Elem(), &out); err != nil {
		return nil, err
	}
	if dup := lo.FindDuplicates(Names(out)); len(dup) > 0 {
		return nil, fmt.Errorf("settings: two fields of %T are named %q", ptr, dup[0])
	}
	return out, nil
}

func walk(v reflect.Value, out *[]Field) error {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, tagged := sf.Tag.Lookup("flag")
		fv := v.Field(i)
		if !tagged {
			if n, ok := fv.Addr().Interface().(Nested); ok && sf.IsExported() {
				for _, p := range n.Structs() {
					pv := reflect.ValueOf(p)
					if pv.Kind() != reflect.Pointer || pv.IsNil() || pv.Elem().Kind() != reflect.Struct {
						return fmt.Errorf("settings: field %s: Structs gave %T, want a pointer to a struct", sf.Name, p)
					}
					if err := walk(pv.Elem(), out); err != nil {
						return err
					}
				}
				continue
			}
			if sf.IsExported() && fv.Kind() == reflect.Struct && !fv.Addr().Type().Implements(textUnmarshaler) && sf.Type != durationType {
				if err := walk(fv, out); err != nil {
					return err
				}
			}
			continue
		}
		if name == "-" {
			continue
		}
		f := Field{Name: name, Usage: sf.Tag.Get("usage"), Category: sf.Tag.Get("category"), Placeholder: sf.Tag.Get("placeholder"), v: fv}
		if u, ok := usager(fv); ok && f.Usage == "" {
			f.Usage = u.Usage()
		}
		for tag, dst := range map[string]**float64{"min": &f.min, "max": &f.max} {
			if s, ok := sf.Tag.Lookup(tag); ok {
				x, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return fmt.Errorf("settings: field %s: %s tag %q is not a number", sf.Name, tag, s)
				}
				*dst = &x
			}
		}
		if !parsable(fv) {
			return fmt.Errorf("settings: field %s (%s) has type %s, which settings cannot parse", sf.Name, name, sf.Type)
		}
		*out = append(*out, f)
	}
	return nil
}

func parsable(v reflect.Value) bool {
	if v.Addr().Type().Implements(textUnmarshaler) || v.Type() == durationType {
		return true
	}
	switch v.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Slice:
		return v.Type().Elem().Kind() == reflect.String
	}
	return false
}

// Addr returns a pointer to the field (a *bool for a switch), for flag
// packages that write through a destination pointer.
func (f Field) Addr() any { return f.v.Addr().Interface() }

// IsList reports whether the setting holds a list of strings.
func (f Field) IsList() bool { return f.v.Kind() == reflect.Slice }

// Append adds s's comma-separated values to a list setting; on any other
// setting it is Set.
func (f Field) Append(s string) error {
	if !f.IsList() {
		return f.Set(s)
	}
	old := f.v.Interface().([]string)
	if err := f.Set(s); err != nil {
		return err
	}
	f.v.Set(reflect.ValueOf(slices.Concat(old, f.v.Interface().([]string))))
	return nil
}

// IsBool reports whether the setting is a switch (a flag given alone means
// true).
func (f Field) IsBool() bool { return f.v.Kind() == reflect.Bool }

// Set parses s into the field. Errors name the setting and say what was
// expected.
func (f Field) Set(s string) error {
	if err := f.set(strings.TrimSpace(s)); err != nil {
		return fmt.Errorf("%s %q: %w", f.Name, s, err)
	}
	return nil
}

func (f Field) set(s string) error {
	if tu, ok := f.v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return tu.UnmarshalText([]byte(s))
	}
	if f.v.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			return errors.New("want a duration such as 30s or 2m")
		}
		if d < 0 {
			return errors.New("want a duration of at least 0")
		}
		f.v.SetInt(int64(d))
		return nil
	}
	switch f.v.Kind() {
	case reflect.String:
		f.v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("want true or false")
		}
		f.v.SetBool(b)
	case reflect.Int, reflect.Uint64:
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || n != math.Trunc(n) || math.IsInf(n, 0) {
			return errors.New("want a whole number")
		}
		// Beyond 2^53 a float64 no longer holds every whole number, and
		// int conversion would wrap silently.
		if math.Abs(n) > 1<<53 {
			return errors.New("want a whole number of at most 2^53")
		}
		if err := f.check(n); err != nil {
			return err
		}
		if f.v.Kind() == reflect.Uint64 {
			if n < 0 {
				return errors.New("want a whole number of at least 0")
			}
			f.v.SetUint(uint64(n))
		} else {
			f.v.SetInt(int64(n))
		}
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return errors.New("want a finite number")
		}
		if err := f.check(x); err != nil {
			return err
		}
		f.v.SetFloat(x)
	case reflect.Slice:
		f.v.Set(reflect.ValueOf(SplitList(s)))
	}
	return nil
}

// check holds x to the field's min and max tags.
func (f Field) check(x float64) error {
	num := func(b float64) string { return strconv.FormatFloat(b, 'g', -1, 64) }
	switch {
	case f.min != nil && f.max != nil && (x < *f.min || x > *f.max):
		return fmt.Errorf("want a number from %s to %s", num(*f.min), num(*f.max))
	case f.min != nil && x < *f.min:
		return fmt.Errorf("want a number of at least %s", num(*f.min))
	case f.max != nil && x > *f.max:
		return fmt.Errorf("want a number of at most %s", num(*f.max))
	}
	return nil
}

// String returns the field's value as Set would read it back.
func (f Field) String() string {
	if tm, ok := f.v.Interface().(encoding.TextMarshaler); ok {
		b, _ := tm.MarshalText()
		return string(b)
	}
	if tm, ok := f.v.Addr().Interface().(encoding.TextMarshaler); ok {
		b, _ := tm.MarshalText()
		return string(b)
	}
	if f.v.Type() == durationType {
		return time.Duration(f.v.Int()).String()
	}
	switch f.v.Kind() {
	case reflect.Float32:
		return strconv.FormatFloat(f.v.Float(), 'g', -1, 32)
	case reflect.Float64:
		return strconv.FormatFloat(f.v.Float(), 'g', -1, 64)
	case reflect.Slice:
		return strings.Join(f.v.Interface().([]string), ",")
	}
	return fmt.Sprint(f.v.Interface())
}

// SplitList splits a comma-separated list setting, dropping spaces around
// the parts and empty parts.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Lookup returns the setting called name.
func Lookup(fields []Field, name string) (Field, bool) {
	i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == name })
	if i < 0 {
		return Field{}, false
	}
	return fields[i], true
}

// Names lists the settings' names, sorted.
func Names(fields []Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	sort.Strings(out)
	return out
}

// Values returns every setting's value as text, keyed by name.
func Values(fields []Field) map[string]string {
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f.Name] = f.String()
	}
	return m
}

// DecodeJSON sets fields from a JSON object keyed by setting name, as a
// `--config` file holds them, skipping the names skip reports true for
// (the flags given on the command line, which win). Strings, numbers
// (1000000 and 1e6 alike), booleans and arrays of strings are accepted; a
// value of another JSON type, or one the field cannot parse, is an error
// naming the key and the type expected. Unknown keys are errors, so a typo
// is never silently ignored. name labels errors (the file's path).
func DecodeJSON(fields []Field, data []byte, name string, skip func(string) bool) error {
	var values map[string]json.RawMessage
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("%s: want a JSON object of settings: %w", name, err)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := Lookup(fields, k)
		if !ok {
			return unknown(name, k, fields)
		}
		if skip != nil && skip(k) {
			continue
		}
		s, err := jsonText(values[k])
		if err != nil {
			return fmt.Errorf("%s: %q: %w (want %s)", name, k, err, f.kind())
		}
		if err := f.Set(s); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// jsonText turns a JSON scalar or string array into the text Set parses.
func jsonText(raw json.RawMessage) (string, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return "", errors.New("an array may hold strings only")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("a JSON %T cannot be a setting", v)
}

// kind names the type of value the field takes, for errors.
func (f Field) kind() string {
	switch {
	case f.v.Addr().Type().Implements(textUnmarshaler):
		return "a string"
	case f.v.Type() == durationType:
		return "a duration string such as \"30s\""
	}
	switch f.v.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a string or an array of strings"
	}
	return "a string"
}

// ApplySpec sets fields from a comma-separated KEY[=VALUE] list, as
// `stem compare --config` takes one; a switch named alone is set true. The
// key "name" is returned rather than set, since it labels the list. A
// list-valued setting cannot be given in a spec (its commas would be
// ambiguous).
func ApplySpec(fields []Field, spec string) (name string, err error) {
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, hasVal := strings.Cut(part, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if key == "name" {
			if !hasVal || val == "" {
				return "", fmt.Errorf("config %q: name needs a value (name=...)", spec)
			}
			name = val
			continue
		}
		f, ok := Lookup(fields, key)
		if !ok {
			return "", unknown(fmt.Sprintf("config %q", spec), key, fields)
		}
		if !hasVal {
			if !f.IsBool() {
				return "", fmt.Errorf("config %q: %s needs a value (%s=...)", spec, key, key)
			}
			val = "true"
		}
		if err := f.Set(val); err != nil {
			return "", fmt.Errorf("config %q: %w", spec, err)
		}
	}
	return name, nil
}

// Nearest returns the candidate closest to s by edit distance when it is
// close enough to be a likely typo (at most two letters off, or a third of
// a long name), for "did you mean" hints; "" when none is.
func Nearest(s string, candidates []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, c := range candidates {
		if d := editdist.Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// unknown is the error for a key that names no setting.
func unknown(where, key string, fields []Field) error {
	if near := Nearest(key, Names(fields)); near != "" {
		return fmt.Errorf("%s: %q is not a setting of this command (did you mean %q?)", where, key, near)
	}
	return fmt.Errorf("%s: %q is not a setting of this command (see --help for the flags; keys are flag names)", where, key)
}

// usager returns the field's Usager, if its type is one.
func usager(v reflect.Value) (Usager, bool) {
	if !v.CanInterface() {
		return nil, false
	}
	u, ok := v.Interface().(Usager)
	return u, ok
}
