package kg

import (
	"slices"
	"testing"
)

func TestTypesOf(t *testing.T) {
	g, err := GraphOf([][3]string{
		{"Washington", "location.us_state.capital", "Olympia"},
		{"Washington", "location.location.containedby", "United States of America"},
		{"Washington", "common.topic.notable_types", "US State"},
		{"Washington", "freebase.valuenotation.is_reviewed", "Capital"},
		{"Jamaican dollar", "finance.currency.countries_used", "Jamaica"},
		{"henry", "__people__person__spouse_s", "anne"},
		{"Inception", "directed_by", "Christopher_Nolan"},
		{"x", "rdf:type", "Person"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		entity string
		want   []string
	}{
		{"Washington", []string{"US State", "location.location", "location.us_state"}},
		{"Jamaican dollar", []string{"finance.currency"}},
		{"henry", []string{"people.person"}},
		{"Inception", nil},
		{"x", []string{"Person"}},
		{"Olympia", nil}, // only entered by edges: no type it states
	} {
		e, _ := g.Entity(tc.entity)
		if got := TypesOf(g, e); !slices.Equal(got, tc.want) {
			t.Errorf("TypesOf(%s) = %q, want %q", tc.entity, got, tc.want)
		}
	}
	if got := TypeWords([]string{"US State", "location.us_state"}); !slices.Equal(got, []string{"location", "state", "us"}) {
		t.Errorf("TypeWords = %q", got)
	}
}

// TestTypeRelation names the relations TypesOf reads tails of as types.
func TestTypeRelation(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"type.object.type", true},
		{"rdf:type", true},
		{"P31", true},
		{"location.us_state.capital", false},
		{"directed_by", false},
		{"", false},
	} {
		if got := TypeRelation(tt.name); got != tt.want {
			t.Errorf("TypeRelation(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
