package compose

import (
	"context"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
)

func TestRead(t *testing.T) {
	tests := []struct {
		q, mention string
		words      []string
		typ        string
		share      bool
	}{
		{"who is the manager of bob martin's manager ?", "bob martin", []string{"manager", "manager"}, "", false},
		{"the gender of charibert_i 's mother 's husband ?", "charibert_i", []string{"mother", "husband", "gender"}, "", false},
		{"the movies written by [John Godey] starred who", "John Godey", []string{"written", "starred", "movies"}, "", false},
		{"where was the founder of globex born ?", "globex", []string{"founder", "born"}, "", false},
		{"what languages are the movies directed by [X] in", "X", []string{"directed", "movies", "languages"}, "languages", false},
		{"who acted together with [X]", "X", []string{"acted"}, "", true},
		{"which cities does the seine flow through ?", "seine", []string{"flow", "cities"}, "cities", false},
		// A participle between the mention and a noun: the mention's
		// clause modifies the noun, whose participle is walked first.
		{"who is listed as screenwriter of [X] starred movies", "X", []string{"starred", "screenwriter", "listed"}, "", false},
		{"what genres are [X] directed films", "X", []string{"directed", "genres"}, "genres", false},
		// An alternative asks for the property that chooses between
		// its words; a "grand" kin word is its kin relation walked twice.
		{"is X 's spouse a man or a woman ?", "X", []string{"spouse", "gender"}, "", false},
		{"who is the grandmother of X ?", "X", []string{"mother", "mother"}, "", false},
		{"where was X 's grandson born ?", "X", []string{"son", "son", "born"}, "", false},
		{"who is the grandstand of X ?", "X", []string{"grandstand"}, "", false},
	}
	for _, tt := range tests {
		rq := read(tt.q, []string{tt.mention}, nil)
		typ := ""
		if rq.typ >= 0 {
			typ = rq.words[rq.typ]
		}
		if !slices.Equal(rq.words, tt.words) || typ != tt.typ || rq.share != tt.share {
			t.Errorf("read(%q) = %v type %q share %v; want %v type %q share %v", tt.q, rq.words, typ, rq.share, tt.words, tt.typ, tt.share)
		}
	}
}

// TestReadKept checks that a "grand" word a relation of the KG names is
// read as it stands, not as its kin relation twice.
func TestReadKept(t *testing.T) {
	kept := func(w string) bool { return w == "grandparents" }
	for _, tt := range []struct {
		q     string
		words []string
	}{
		{"who are the grandparents of X ?", []string{"grandparents"}},
		{"who is the grandmother of X ?", []string{"mother", "mother"}},
	} {
		if got := read(tt.q, []string{"X"}, kept).words; !slices.Equal(got, tt.words) {
			t.Errorf("read(%q) = %v, want %v", tt.q, got, tt.words)
		}
	}
}

// TestRuns checks which pairs of words may be read as one run naming one
// relation: neighbours in the question, not words on either side of the
// entity.
func TestRuns(t *testing.T) {
	tests := []struct {
		q, mention, a, b string
		want             bool
	}{
		{"what were the release years of the movies directed by [X]", "X", "release", "years", true},
		{"the place of death of X 's manager ?", "X", "place", "death", true},
		{"what is the son of X 's kid ?", "X", "son", "kid", false},
		{"X 's mother 's husband ?", "X", "mother", "husband", true},
		{"which films did X star in ?", "X", "films", "star", false},
		{"what were the release years of the movies directed by [X]", "X", "years", "movies", true},
	}
	for _, tt := range tests {
		rq := read(tt.q, []string{tt.mention}, nil)
		a, b := slices.Index(rq.words, tt.a), slices.Index(rq.words, tt.b)
		if a < 0 || b < 0 {
			t.Fatalf("read(%q) = %v: want words %q and %q", tt.q, rq.words, tt.a, tt.b)
		}
		if got := rq.runs(a, b); got != tt.want {
			t.Errorf("%q: runs(%q, %q) = %v, want %v", tt.q, tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSameStem(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"acted", "actors", true}, {"directed", "director", true}, {"starred", "star", true},
		{"nation", "nationality", true}, {"wrote", "writer", true}, {"screenwriter", "writer", true},
		{"languages", "language", true}, {"released", "release", true}, {"born", "birth", true},
		{"screenwriter", "written", true}, {"birthplace", "place", true},
		{"director", "writer", false}, {"spouse", "parents", false}, {"movies", "release", false},
		{"grandson", "son", false}, {"feather", "father", false},
	} {
		if got := sameStem(tt.a, tt.b); got != tt.want {
			t.Errorf("sameStem(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestComposesWithSpelling checks alignment alone, with the spelling-only
// encoder: the number of hops follows the relation words, and the order
// follows their distance from the entity.
func TestComposesWithSpelling(t *testing.T) {
	ctx := context.Background()
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"bob", "manager", "alice"}, {"alice", "manager", "frank"}, {"frank", "born_in", "austin"},
		{"bob", "works_for", "acme"}, {"acme", "headquartered_in", "springfield"},
		{"alice", "cause_of_death", "flu"}, {"frank", "cause_of_death", "flu"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, g, wordvec.New(nil, wordvec.Options{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ q, want string }{
		{"who is the manager of bob 's manager ?", "manager > manager >"},
		{"who is bob 's manager ?", "manager >"},
		{"where was the manager of bob 's manager born ?", "manager > manager > born_in >"},
		{"where is the headquarters of the company bob works for ?", "works_for > headquartered_in >"},
		// A relation named in several words is one hop, not a walk
		// there and back.
		{"what is the cause of death of bob 's manager ?", "manager > cause_of_death >"},
		{"bob 's manager 's cause of death ?", "manager > cause_of_death >"},
	} {
		pr, err := p.Predict(ctx, tt.q, []string{"bob"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, s := range pr.Paths[0].Steps {
			got += s.Rel + map[bool]string{true: " < ", false: " > "}[s.Dir == 1]
		}
		if got != tt.want+" " {
			t.Errorf("%q: best path %q, want %q", tt.q, got, tt.want)
		}
	}
}

// TestHubKeepsNamedPaths checks that where a hub leaves more last-hop
// paths than MaxPaths, the paths kept are those the question's words
// name, not those reaching the fewest entities: the currency a country
// uses reaches more entities than each of its rare relations.
func TestHubKeepsNamedPaths(t *testing.T) {
	ctx := context.Background()
	b := kg.NewBuilder()
	b.Add("song", "artist", "ann")
	b.Add("ann", "nationality", "usa")
	for _, c := range []string{"dollar", "peso", "euro"} {
		b.Add("usa", "currency_used", c)
	}
	for _, r := range []string{"anthem", "motto", "flower", "bird", "tree", "dish"} {
		b.Add("usa", r, r+"_of_usa")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		maxPaths int
		want     string
	}{
		{3, "artist > nationality > currency_used > "},
		{400, "artist > nationality > currency_used > "},
	} {
		p, err := New(ctx, g, wordvec.New(nil, wordvec.Options{}), Config{MaxHops: 3, MaxPaths: tt.maxPaths})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := p.Predict(ctx, "what is the currency used of the nationality of the artist of song ?", []string{"song"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, s := range pr.Paths[0].Steps {
			got += s.Rel + map[bool]string{true: " < ", false: " > "}[s.Dir == 1]
		}
		if got != tt.want {
			t.Errorf("MaxPaths %d: best path %q, want %q (notes %q)", tt.maxPaths, got, tt.want, pr.Notes)
		}
	}
}
