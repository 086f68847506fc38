package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
)

func TestResolveAll(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader("Tom_Hanks\tstarred_in\tBig\nm.0jcx\tborn_in\tUlm\n"), "t.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want []string
		err      string
	}{
		{nil, []string{}, ""},
		{[]string{"Big", "m.0jcx"}, []string{"Big", "m.0jcx"}, ""},
		{[]string{"tom hanks", "ULM"}, []string{"Tom_Hanks", "Ulm"}, ""},
		{[]string{"Big", "Small"}, nil, `entity "Small" is not in the KG`},
	} {
		got, err := ResolveAll(g, tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ResolveAll(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ResolveAll(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
