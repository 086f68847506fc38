package load

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/plan"
)

func TestAnswerNames(t *testing.T) {
	// A real View, as the server writes it: escapes, chains whose text
	// holds brackets and quotes, answers after other members.
	v := plan.View{Question: `who's "the" director of [Inception] ?`, Chains: []string{"a -> b {x}"},
		Timings: map[string]plan.Duration{"trace": plan.Duration(1500 * time.Microsecond)},
		Answers: []generation.Answer{
			{Name: "Christopher Nolan", Score: 0.5, Supported: true, Chains: []string{`Inception -> directed_by -> "Christopher Nolan"]`, `}\\`}},
			{Name: `Émile "Q" \ Zola <b>`, Entity: "m.01", Chains: []string{}},
			{Name: "", Chains: nil},
		}}
	view, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body string
		want       []string
		err        string
	}{
		{"a view", string(view), []string{"Christopher Nolan", `Émile "Q" \ Zola <b>`, ""}, ""},
		{"compact, answers last", `{"x":[1,{"y":"]"}],"n":-1.5e3,"t":true,"answers":[{"score":1,"answer":"a"}]}`, []string{"a"}, ""},
		{"no answers", `{"question":"q","answers":[]}`, []string{}, ""},
		{"null answers", `{"answers":null}`, []string{}, ""},
		{"escaped key", `{"answ\u0065rs":[{"answer":"a\u00e9"}]}`, []string{"aé"}, ""},
		{"missing", `{"question":"q"}`, nil, `no "answers"`},
		{"not an object", `[1]`, nil, "not a JSON object"},
		{"answers not an array", `{"answers":{}}`, nil, "not an array"},
		{"answer without a name", `{"answers":[{"score":1}]}`, nil, `no "answer" name`},
		{"truncated string", `{"question":"q`, nil, "unterminated string"},
		{"truncated array", `{"chains":["a",`, nil, "unterminated"},
		{"no comma", `{"a":1 "answers":[]}`, nil, "want , between members"},
		{"empty", ``, nil, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := answerNames([]byte(tc.body), []string{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			// encoding/json reads the same names.
			var ref struct {
				Answers []struct {
					Name string `json:"answer"`
				} `json:"answers"`
			}
			if err := json.Unmarshal([]byte(tc.body), &ref); err != nil {
				t.Fatal(err)
			}
			for i, a := range ref.Answers {
				if got[i] != a.Name {
					t.Errorf("answer %d: %q, encoding/json reads %q", i, got[i], a.Name)
				}
			}
		})
	}
}

func BenchmarkAnswerNames(b *testing.B) {
	v := plan.View{Question: "what films did the director of [Inception] write ?", Chains: []string{}}
	for i := range 20 {
		a := generation.Answer{Name: fmt.Sprintf("Film %d", i), Supported: true}
		for j := range 5 {
			a.Chains = append(a.Chains, fmt.Sprintf("Inception -> directed_by -> Christopher Nolan -> written_by <- Film %d %d", i, j))
		}
		v.Answers = append(v.Answers, a)
		v.Chains = append(v.Chains, a.Chains...)
	}
	body, _ := json.Marshal(v)
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		var dst []string
		for b.Loop() {
			dst, _ = answerNames(body, dst[:0])
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		var ref struct {
			Answers []struct {
				Name string `json:"answer"`
			} `json:"answers"`
		}
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			ref.Answers = ref.Answers[:0]
			json.Unmarshal(body, &ref)
		}
	})
}
