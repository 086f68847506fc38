package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stem-kgqa/stem/settings"
)

// named is what a registry of this package holds (Registry, Planners):
// its entries by name, and the names in registration order.
type named[E any] struct {
	names   []string
	entries map[string]E
}

// add registers e as name. Names are lowercase words; a name already
// registered is an error. kind says what the registry holds, for errors.
func (n *named[E]) add(kind, name string, e E) error {
	if name == "" || strings.ToLower(name) != name || strings.ContainsAny(name, " ,") {
		return fmt.Errorf("%s name %q: want a lowercase word", kind, name)
	}
	if _, ok := n.entries[name]; ok {
		return fmt.Errorf("%s %q is registered twice", kind, name)
	}
	if n.entries == nil {
		n.entries = map[string]E{}
	}
	n.names = append(n.names, name)
	n.entries[name] = e
	return nil
}

// check reports whether name is registered, with an error that lists
// the names and suggests the nearest.
func (n *named[E]) check(kind, name string) error {
	if _, ok := n.entries[name]; ok {
		return nil
	}
	msg := fmt.Sprintf("unknown %s %q (have %s)", kind, name, strings.Join(n.names, ", "))
	if near := settings.Nearest(name, n.names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return errors.New(msg)
}
