package constraint

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want string
	}{
		{"what team did david beckham play for in 2011", "[(time 2011 2011) (type team team)]"},
		{"what happened in bosnia in the 90s", "[(time 1990-1999 the 90s)]"},
		{"what records did the 1960s bring", "[(time 1960-1969 1960s) (type record records)]"},
		{"who is the current governor of tennessee", "[(time current current)]"},
		{"when 's the last time the steelers won the superbowl", "[(order last last)]"},
		{"who was the first dictator of the soviet union", "[(order first first)]"},
		{"who is khloe kardashian 's husband", "[(gender male husband)]"},
		{"what is the name of justin bieber brother", "[(gender male brother)]"},
		{"who is the wife of the director of inception ?", "[(gender female wife)]"},
		{"who is the husband of father of henry 's mom ?", "[(gender male husband)]"},
		{"who is henry 's mom 's husband ?", "[(gender male husband)]"},
		{"what state is mount st. helens in", "[(type state state)]"},
		{"which countries border germany", "[(type country countries)]"},
		{"what kind of language do they speak in iran", "[(type language language)]"},
		{"the screenwriter of the thief lord also wrote which movies", "[(type movie movies)]"},
		{"what is the position of the teams of ann lee before 1990 ?", "[(time -1989 before 1990)]"},
		{"which team did he play for after 2003", "[(time 2004- after 2003) (type team team)]"},
		{"who has led the party since 1985", "[(time 1985- since 1985)]"},
		{"what is the largest city in texas", "[(order max largest)]"},
		{"which is the smallest country in europe", "[(order min smallest)]"},
		{"what is the capital of france", "[]"},
		{"what year did the war end", "[]"},
		{"where did william morris go to college", "[]"},
	} {
		var got []string
		for _, c := range Detect(tc.q) {
			got = append(got, fmt.Sprintf("(%s %s %s)", c.Kind, c.Value, c.Text))
		}
		if s := fmt.Sprint(got); s != tc.want && !(tc.want == "[]" && len(got) == 0) {
			t.Errorf("Detect(%q) = %s, want %s", tc.q, s, tc.want)
		}
	}
}

// beckham is a KG with CVTs carrying dates, genders and types.
func beckham(t *testing.T) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf([][3]string{
		{"David Beckham", "sports.pro_athlete.teams", "m.01"},
		{"m.01", "sports.sports_team_roster.team", "Manchester United"},
		{"m.01", "sports.sports_team_roster.from", "1992"},
		{"m.01", "sports.sports_team_roster.to", "2003"},
		{"David Beckham", "sports.pro_athlete.teams", "m.02"},
		{"m.02", "sports.sports_team_roster.team", "LA Galaxy"},
		{"m.02", "sports.sports_team_roster.from", "2007-07-01"},
		{"m.02", "sports.sports_team_roster.to", "2012"},
		{"David Beckham", "sports.pro_athlete.teams", "m.03"},
		{"m.03", "sports.sports_team_roster.team", "Paris Saint-Germain"},
		{"m.03", "sports.sports_team_roster.from", "2013"},
		{"Victoria Beckham", "people.person.gender", "Female"},
		{"Brooklyn Beckham", "people.person.gender", "Male"},
		{"Washington", "location.us_state.capital", "Olympia"},
		{"North America", "location.continent.countries", "United States"},
		{"Lyon", "location.location.area", "47.87"},
		{"Paris", "location.location.area", "105.4"},
		{"Paris", "location.location.founded", "0250-01-01"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestApply(t *testing.T) {
	g := beckham(t)
	id := func(n string) int32 { e, _ := g.Entity(n); return e }
	teams := []Answer{{Entity: id("Manchester United"), Via: []int32{id("m.01")}}, {Entity: id("LA Galaxy"), Via: []int32{id("m.02")}},
		{Entity: id("Paris Saint-Germain"), Via: []int32{id("m.03")}}}
	people := []Answer{{Entity: id("Victoria Beckham")}, {Entity: id("Brooklyn Beckham")}, {Entity: id("David Beckham")}}
	cities := []Answer{{Entity: id("Lyon")}, {Entity: id("Paris")}, {Entity: id("Olympia")}}
	places := []Answer{{Entity: id("North America")}, {Entity: id("Olympia")}, {Entity: id("Washington")}}
	for _, tc := range []struct {
		name    string
		c       schema.Constraint
		answers []Answer
		want    []int
		dropped int
	}{
		{"in 2011", schema.Constraint{Kind: Time, Value: "2011", Text: "2011"}, teams, []int{1}, 2},
		{"in the 90s", schema.Constraint{Kind: Time, Value: "1990-1999", Text: "90s"}, teams, []int{0}, 2},
		{"current: no end date", schema.Constraint{Kind: Time, Value: "current", Text: "current"}, teams, []int{2}, 2},
		{"current, every fact ended: the latest to end", schema.Constraint{Kind: Time, Value: "current", Text: "now"}, teams[:2], []int{1}, 1},
		{"first", schema.Constraint{Kind: Order, Value: "first", Text: "first"}, teams, []int{0}, 2},
		{"last", schema.Constraint{Kind: Order, Value: "last", Text: "last"}, teams, []int{2}, 2},
		{"before 2000", schema.Constraint{Kind: Time, Value: "-1999", Text: "before 2000"}, teams, []int{0}, 2},
		{"after 2003: a fact that ended in 2003 fails, one with no end holds", schema.Constraint{Kind: Time, Value: "2004-", Text: "after 2003"}, teams, []int{1, 2}, 1},
		{"in 1950: every answer fails, none dropped", schema.Constraint{Kind: Time, Value: "1950", Text: "1950"}, teams, []int{0, 1, 2}, 0},
		{"female ranks first, drops none", schema.Constraint{Kind: Gender, Value: "female", Text: "wife"}, people, []int{0, 1, 2}, 0},
		{"male ranks first, the others keep their order", schema.Constraint{Kind: Gender, Value: "male", Text: "husband"}, people, []int{1, 0, 2}, 0},
		{"type state ranks first, drops none", schema.Constraint{Kind: Type, Value: "state", Text: "state"}, places, []int{2, 0, 1}, 0},
		{"no dates: unchecked", schema.Constraint{Kind: Time, Value: "2011", Text: "2011"}, people, []int{0, 1, 2}, 0},
		{"largest by area", schema.Constraint{Kind: Order, Value: "max", Text: "largest"}, cities, []int{1}, 2},
		{"smallest by area, a city with none unknown", schema.Constraint{Kind: Order, Value: "min", Text: "smallest"}, cities, []int{0}, 2},
		{"no numbers: unchecked", schema.Constraint{Kind: Order, Value: "max", Text: "largest"}, people, []int{0, 1, 2}, 0},
	} {
		keep, reps := Apply(g, []schema.Constraint{tc.c}, tc.answers)
		if !slices.Equal(keep, tc.want) || reps[0].Dropped != tc.dropped {
			t.Errorf("%s: kept %v (dropped %d), want %v (%d); %s", tc.name, keep, reps[0].Dropped, tc.want, tc.dropped, reps[0].Note)
		}
	}
	_, reps := Apply(g, []schema.Constraint{{Kind: Time, Value: "2011", Text: "2011"}}, people)
	if want := `time "2011" not checked: the KG holds no dates for any of the 3 answers`; reps[0].Note != want {
		t.Errorf("note %q, want %q", reps[0].Note, want)
	}
}

func FuzzDetect(f *testing.F) {
	for _, s := range []string{"who is his wife in 2011", "what states", "the 90s", "which", "what kind of"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, c := range Detect(q) {
			if c.Kind == "" || c.Value == "" {
				t.Fatalf("Detect(%q): empty constraint %+v", q, c)
			}
		}
	})
}

// instances is a dictionary of named things, as WordNet's instance
// pointers give them.
type instances map[string][][]string

func (m instances) InstanceKinds(name string) [][]string { return m[name] }

// TestKind infers kinds on a KG with no type edges: cities located_in
// countries, companies based_in cities, and one relation named for a kind.
func TestKind(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader(`acme_corp	based_in	lyon
globex	based_in	marseille
lyon	located_in	france
paris	located_in	france
marseille	located_in	france
osaka	located_in	japan
osaka	country	japan
hamburg	located_in	germany
`), "untyped.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lex := instances{"france": {{"european_country"}, {"country"}}, "germany": {{"european_country"}, {"country"}},
		"lyon": {{"city"}, {"municipality"}, {"urban_area"}, {"geographical_area"}, {"region"}, {"country"}}, "paris": {{"national_capital"}, {"capital"}, {"city"}}, "hamburg": {{"city"}}}
	for _, tc := range []struct {
		entity, kind string
		lex          bool
		want         Verdict
		why          string
	}{
		{"france", "country", true, Holds, "WordNet: france is an instance of european_country, a kind of country"},
		{"lyon", "city", true, Holds, "WordNet: lyon is an instance of city"},
		{"lyon", "country", true, Unknown, ""}, // a country only far up
		{"lyon", "person", true, Fails, ""},
		// Not in the dictionary: a city as lyon and paris, which are
		// located_in france too.
		{"marseille", "city", true, Holds, "as lyon, which also located_in france (2 of 2 such entities known)"},
		{"marseille", "country", true, Unknown, ""},
		// A relation named for the kind.
		{"japan", "country", false, Holds, `the tail of "country"`},
		// Nothing says what a company is.
		{"acme_corp", "country", true, Unknown, ""},
		{"france", "country", false, Unknown, ""},
		{"osaka", "city", true, Unknown, ""},
	} {
		e, _ := g.Entity(tc.entity)
		c := Checker{Graph: g}
		if tc.lex {
			c.Lexicon = lex
		}
		if v, why := c.Kind(e, tc.kind); v != tc.want || why != tc.why {
			t.Errorf("Kind(%s, %s) lexicon %v = %v %q, want %v %q", tc.entity, tc.kind, tc.lex, v, why, tc.want, tc.why)
		}
		// A KindCache judges alike, asked twice (the second time from
		// what it kept), and a kind Holds only where PossibleKinds has it.
		kc := NewKindCache(c, 0)
		for range 2 {
			if v := kc.Kind(e, tc.kind); v != tc.want {
				t.Errorf("KindCache.Kind(%s, %s) lexicon %v = %v, want %v", tc.entity, tc.kind, tc.lex, v, tc.want)
			}
		}
		if tc.want == Holds && !c.PossibleKinds()[tc.kind] {
			t.Errorf("PossibleKinds lexicon %v lacks %s, which %s is", tc.lex, tc.kind, tc.entity)
		}
	}
	for _, tc := range []struct {
		lex  bool
		want []string
	}{
		{false, []string{"country", "in"}},
		{true, []string{"capital", "city", "country", "european_country", "in", "municipality", "national_capital", "urban_area"}},
	} {
		c := Checker{Graph: g}
		if tc.lex {
			c.Lexicon = lex
		}
		if got := slices.Sorted(maps.Keys(c.PossibleKinds())); !slices.Equal(got, tc.want) {
			t.Errorf("PossibleKinds lexicon %v = %q, want %q", tc.lex, got, tc.want)
		}
	}
	// Apply ranks the city after the country and says how the country's
	// kind was known.
	fr, _ := g.Entity("france")
	pa, _ := g.Entity("paris")
	keep, reps := Checker{Graph: g, Lexicon: lex}.Apply([]schema.Constraint{{Kind: Type, Value: "country", Text: "country"}}, []Answer{{Entity: pa}, {Entity: fr}})
	if !slices.Equal(keep, []int{1, 0}) || len(reps) != 1 || reps[0].Held != 1 || reps[0].Failed != 1 ||
		!slices.Equal(reps[0].Kinds, []string{"france: WordNet: france is an instance of european_country, a kind of country"}) {
		t.Errorf("Apply = %v, %+v", keep, reps)
	}
}

// TestOrderByName: where the KG holds no dates, "first" and "last" read
// the years in the answers' names, or the numerals of one series; names
// of several series are not ordered.
func TestOrderByName(t *testing.T) {
	for _, tc := range []struct {
		order string
		names []string
		want  string
	}{
		{"last", []string{"2012 World Series", "2014 World Series", "Giants"}, "2014 World Series"},
		{"first", []string{"1976–77 European Cup", "1964–65 FA Cup", "1977 European Cup Final"}, "1964–65 FA Cup"},
		{"last", []string{"Super Bowl X", "Super Bowl XL", "Super Bowl XLIII", "Super Bowl IX"}, "Super Bowl XLIII"},
		{"first", []string{"Super Bowl X", "Super Bowl XL", "Super Bowl IX"}, "Super Bowl IX"},
		// One name of four with a year: the series' numerals decide.
		{"last", []string{"2009 AFC Championship Game", "Super Bowl X", "Super Bowl XL", "Super Bowl XLIII"}, "Super Bowl XLIII"},
		// Two series: no order between a Henry and an Edward.
		{"first", []string{"Henry VIII", "Edward VI"}, "Henry VIII,Edward VI"},
		{"last", []string{"Orlando Magic", "Los Angeles Lakers"}, "Orlando Magic,Los Angeles Lakers"},
		// One album of five named for a year: no edition series.
		{"first", []string{"1984", "5150", "Fair Warning", "Diver Down", "Women and Children First"}, "1984,5150,Fair Warning,Diver Down,Women and Children First"},
	} {
		var triples [][3]string
		for _, n := range tc.names {
			triples = append(triples, [3]string{"Team", "won", n})
		}
		g, err := kg.GraphOf(triples)
		if err != nil {
			t.Fatal(err)
		}
		var as []Answer
		for _, n := range tc.names {
			id, _ := g.Entity(n)
			as = append(as, Answer{Entity: id})
		}
		keep, reps := Apply(g, []schema.Constraint{{Kind: Order, Value: tc.order, Text: tc.order}}, as)
		var got []string
		for _, i := range keep {
			got = append(got, tc.names[i])
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s of %v: kept %v, want %s (%s)", tc.order, tc.names, got, tc.want, reps[0].Note)
		}
	}
}

// TestDescribes: a span that names an entity beside the question's own
// is a second thing to meet unless it names the answer's type, the
// answer itself, or a relation of the plan.
func TestDescribes(t *testing.T) {
	for _, tc := range []struct {
		q, span string
		rels    []string
		want    bool
	}{
		{"who was canadian prime minister in 1993", "prime minister", []string{"government.governmental_jurisdiction.governing_officials"}, true},
		{"what language do maltese speak", "language", []string{"location.country.languages_spoken"}, true},
		{"what kind of guitar did jerry garcia play", "guitar", nil, true},
		{"where did picasso live", "live", []string{"people.person.places_lived"}, true},
		{"which school with the mascot eagles did alice attend ?", "eagles", []string{"attended"}, false},
		{"which country bordering freedonia contains an airport that serves lyon ?", "lyon", []string{"borders"}, false},
		{"who was the earliest president of freedonia during the great war ?", "great war", []string{"office_holder", "holder"}, false},
	} {
		if got := Describes(tc.q, tc.span, Detect(tc.q), tc.rels); got != tc.want {
			t.Errorf("Describes(%q, %q) = %v, want %v", tc.q, tc.span, got, tc.want)
		}
	}
}

// TestAttached: a second thing stands in a relative clause or a with- or
// during-phrase.
func TestAttached(t *testing.T) {
	for _, tc := range []struct {
		q, span string
		want    bool
	}{
		{"which school with the mascot eagles did alice attend ?", "eagles", true},
		{"which country bordering freedonia contains an airport that serves lyon ?", "lyon", true},
		{"who was the earliest president of freedonia during the great war ?", "great war", true},
		{"what language do maltese speak", "speak", false},
		{"what do people speak in canada", "people", false},
		{"which school near lyon did alice attend ?", "lyon", false},
	} {
		if got := Attached(tc.q, tc.span); got != tc.want {
			t.Errorf("Attached(%q, %q) = %v, want %v", tc.q, tc.span, got, tc.want)
		}
	}
}

// TestReads lists the relation endings a check reads, so that a remote KG
// fetches only those; a check that reads every edge gives none.
func TestReads(t *testing.T) {
	for _, tc := range []struct {
		cs   []schema.Constraint
		want []string
	}{
		{[]schema.Constraint{{Kind: Gender, Value: "female"}}, []string{"gender"}},
		{[]schema.Constraint{{Kind: Time, Value: "2011"}}, []string{"date", "from", "to"}},
		{[]schema.Constraint{{Kind: Order, Value: "first"}, {Kind: Gender, Value: "male"}}, []string{"date", "from", "gender", "to"}},
		{[]schema.Constraint{{Kind: Order, Value: "max"}}, nil},
		{[]schema.Constraint{{Kind: Gender, Value: "male"}, {Kind: Type, Value: "country"}}, nil},
		{nil, nil},
	} {
		if got := Reads(tc.cs); !slices.Equal(got, tc.want) {
			t.Errorf("Reads(%v) = %v, want %v", tc.cs, got, tc.want)
		}
	}
	// Every relation the checks match ends in what Reads gives.
	for _, r := range []string{"gender", "people.person.gender", "person__gender", "from", "x.from", "x_to", "office.start_date", "end_date", "x.from_date", "to_date"} {
		if !slices.ContainsFunc(Reads([]schema.Constraint{{Kind: Gender}, {Kind: Time}, {Kind: Order, Value: "last"}}), func(e string) bool { return strings.HasSuffix(r, e) }) {
			t.Errorf("%q is read by a check but ends in none of Reads' endings", r)
		}
	}
}

func TestSeries(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"2014 World Series", "world series"}, {"2010 World Series", "world series"},
		{"Super Bowl XLVII", "super bowl"}, {"1984", ""}, {"Dwight Howard", ""},
	} {
		if got, ok := Series(tc.name); got != tc.want || ok != (tc.want != "") {
			t.Errorf("Series(%q) = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}
