package settings

import (
	"reflect"
	"slices"
)

// Plugins holds the settings structs of plugins registered at run time
// (retrieval strategies, KG backends), one per plugin that has any, in
// registration order. It implements Nested, so a field of this type in a
// settings struct brings every plugin's tagged fields in as flags, config
// keys and compare keys. Its zero value holds none. Copies share the
// structs: Clone before setting fields of a copy.
type Plugins struct {
	names []string
	ptrs  []any
}

// NewPlugins collects the defaults of the plugins a registry lists, in
// order: defaults(name) returns the function that makes plugin name's
// settings struct (a pointer), nil for a plugin without settings.
func NewPlugins(names []string, defaults func(name string) func() any) Plugins {
	var p Plugins
	for _, n := range names {
		if d := defaults(n); d != nil {
			p.names = append(p.names, n)
			p.ptrs = append(p.ptrs, d())
		}
	}
	return p
}

// Typed adapts a plugin's typed settings struct S to Plugins: newPtr
// makes S's defaults as the pointer Plugins holds, value reads a plugin's
// struct back (its defaults when v holds none).
func Typed[S any](defaults func() S) (newPtr func() any, value func(v any) S) {
	newPtr = func() any { s := defaults(); return &s }
	value = func(v any) S {
		if s, ok := v.(*S); ok && s != nil {
			return *s
		}
		return defaults()
	}
	return newPtr, value
}

// Structs implements Nested.
func (p Plugins) Structs() []any { return slices.Clone(p.ptrs) }

// Of returns plugin name's settings struct (a pointer), nil when p holds
// none for it.
func (p Plugins) Of(name string) any {
	if i := slices.Index(p.names, name); i >= 0 {
		return p.ptrs[i]
	}
	return nil
}

// Clone returns a copy whose structs are copies.
func (p Plugins) Clone() Plugins {
	out := Plugins{names: slices.Clone(p.names), ptrs: make([]any, len(p.ptrs))}
	for i, ptr := range p.ptrs {
		v := reflect.ValueOf(ptr).Elem()
		c := reflect.New(v.Type())
		c.Elem().Set(v)
		out.ptrs[i] = c.Interface()
	}
	return out
}
