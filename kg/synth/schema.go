package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// prop is one relation of a type in the hand-written core schema. A prop
// with cvt set points at a mediator type: each edge creates a fresh CVT
// node that then gets one edge per relation named in cvt.
type prop struct {
	name   string   // full relation name, domain.type.property
	target string   // type of the tail (for a CVT edge: the CVT type)
	cvt    []string // relations the new CVT node emits (CVT props only)
}

// typeSpec is one entity type of the core schema. weight sets its share of
// the named entities; hub types have a fixed list of names instead and are
// where the degree distribution's head comes from.
type typeSpec struct {
	name   string
	weight float64
	props  []prop
	hub    []string // fixed names: hub entities
	cvt    bool     // mediator type: nodes are created per edge, unnamed
	style  []string // name prefixes for generated names
}

// The literal dates of Config.Complex graphs: a type whose entities are
// dates, and the CVT types whose nodes say from when to when their fact
// held (Freebase's from and to), read by comparative and superlative
// questions.
const dateType = "type.datetime"

// numberType is the numeric literals' type, and areaRel the relation
// that gives places a number (Config.Complex), read by superlatives over
// numbers ("the largest area").
const (
	numberType = "type.float"
	areaRel    = "location.location.area"
)

// numbers are the numeric literals' names: areas from 1.5 to 3000 in
// steps of 1.5.
func numbers() []string {
	out := make([]string, 2000)
	for i := range out {
		out[i] = strconv.FormatFloat(1.5*float64(i+1), 'f', -1, 64)
	}
	return out
}

var datedCVTs = []string{"government.government_position_held", "sports.sports_team_roster", "people.marriage"}

// dates are the date literals' names, ascending: the first of each
// quarter from 1950 to 2019.
func dates() []string {
	var out []string
	for y := 1950; y < 2020; y++ {
		for _, m := range []string{"01", "04", "07", "10"} {
			out = append(out, fmt.Sprintf("%d-%s-01", y, m))
		}
	}
	return out
}

var personFirst = []string{"John", "Mary", "Anna", "Peter", "Lucas", "Maria", "David", "Sofia", "James", "Elena", "Omar", "Yuki",
	"Ravi", "Chen", "Fatima", "Hugo", "Ines", "Kwame", "Lena", "Marco", "Nadia", "Oscar", "Priya", "Sven"}

// core is the Freebase-like part of the schema: the types and relations
// questions read naturally over, the hubs and the CVT patterns.
var core = []typeSpec{
	{name: "location.country", hub: []string{"United States of America", "United Kingdom", "France", "Germany", "Japan",
		"India", "Canada", "Italy", "Spain", "Australia", "Brazil", "China", "Mexico", "Sweden", "Netherlands", "Russia",
		"South Korea", "Argentina", "Ireland", "Poland"},
		props: []prop{{name: "location.country.capital", target: "location.location"},
			{name: "location.country.official_language", target: "language.human_language"},
			{name: "location.country.currency_used", target: "finance.currency"},
			{name: "location.country.form_of_government", target: "government.form_of_government"}}},
	{name: "people.gender", hub: []string{"Male", "Female"}},
	{name: "language.human_language", hub: []string{"English Language", "Spanish Language", "French Language",
		"German Language", "Japanese Language", "Hindi Language", "Italian Language", "Mandarin Chinese", "Portuguese Language", "Russian Language"},
		props: []prop{{name: "language.human_language.countries_spoken_in", target: "location.country"},
			{name: "language.human_language.language_family", target: "language.language_family"}}},
	{name: "people.person", weight: 30, style: personFirst, props: []prop{
		{name: "people.person.nationality", target: "location.country"},
		{name: "people.person.gender", target: "people.gender"},
		{name: "people.person.place_of_birth", target: "location.location"},
		{name: "people.person.profession", target: "people.profession"},
		{name: "film.actor.film", target: "film.performance", cvt: []string{"film.performance.film", "film.performance.character"}},
		{name: "people.person.languages", target: "language.human_language"},
		{name: "people.person.spouse_s", target: "people.marriage", cvt: []string{"people.marriage.spouse", "people.marriage.location_of_ceremony"}},
		{name: "people.person.children", target: "people.person"},
		{name: "people.person.places_lived", target: "location.location"},
		{name: "people.person.education", target: "education.education", cvt: []string{"education.education.institution", "education.education.degree"}},
		{name: "people.person.religion", target: "religion.religion"},
		{name: "sports.pro_athlete.teams", target: "sports.sports_team_roster", cvt: []string{"sports.sports_team_roster.team", "sports.sports_team_roster.position"}},
		{name: "government.politician.government_positions_held", target: "government.government_position_held",
			cvt: []string{"government.government_position_held.office_position_or_title", "government.government_position_held.jurisdiction_of_office"}},
		{name: "award.award_winner.awards_won", target: "award.award_honor", cvt: []string{"award.award_honor.award", "award.award_honor.ceremony"}},
	}},
	{name: "location.location", weight: 12, style: []string{"Port", "Lake", "Mount", "New", "San", "North", "East", "Fort"}, props: []prop{
		{name: "location.location.containedby", target: "location.location"},
		{name: "location.location.country", target: "location.country"},
		{name: "location.location.time_zones", target: "time.time_zone"},
		{name: "location.location.nearby_airports", target: "aviation.airport"},
	}},
	{name: "film.film", weight: 10, style: []string{"The", "Return of", "Night of", "A", "Last", "Beyond"}, props: []prop{
		{name: "film.film.directed_by", target: "people.person"},
		{name: "film.film.language", target: "language.human_language"},
		{name: "film.film.genre", target: "film.film_genre"},
		{name: "film.film.starring", target: "film.performance", cvt: []string{"film.performance.actor", "film.performance.character"}},
		{name: "film.film.country", target: "location.country"},
		{name: "film.film.written_by", target: "people.person"},
		{name: "film.film.produced_by", target: "people.person"},
	}},
	{name: "music.recording", weight: 8, style: []string{"Song of", "Echoes of", "Dancing", "Blue", "Little"}, props: []prop{
		{name: "music.recording.artist", target: "people.person"},
		{name: "music.recording.releases", target: "music.release"},
		{name: "music.recording.genre", target: "music.genre"},
		{name: "music.recording.producer", target: "people.person"},
	}},
	{name: "music.release", weight: 3, style: []string{"Live at", "Best of", "Album"}, props: []prop{
		{name: "music.release.label", target: "music.record_label"},
		{name: "music.release.region", target: "location.country"},
		{name: "music.release.format", target: "music.release_format"},
	}},
	{name: "book.book", weight: 4, style: []string{"Tales of", "The Book of", "Letters from"}, props: []prop{
		{name: "book.written_work.author", target: "people.person"},
		{name: "book.book.genre", target: "book.book_subject"},
		{name: "book.written_work.original_language", target: "language.human_language"},
	}},
	{name: "organization.organization", weight: 4, style: []string{"Bank of", "Institute of", "Society of", "Group"}, props: []prop{
		{name: "organization.organization.place_founded", target: "location.location"},
		{name: "organization.organization.founders", target: "people.person"},
		{name: "organization.organization.headquarters", target: "location.location"},
		{name: "business.business_operation.industry", target: "business.industry"},
	}},
	{name: "sports.sports_team", weight: 1, style: []string{"FC", "Athletic", "United", "Rovers"}, props: []prop{
		{name: "sports.sports_team.sport", target: "sports.sport"},
		{name: "sports.sports_team.location", target: "location.location"},
		{name: "sports.sports_team.roster", target: "sports.sports_team_roster", cvt: []string{"sports.sports_team_roster.player", "sports.sports_team_roster.position"}},
	}},
	{name: "education.university", weight: 1, style: []string{"University of", "College of", "Academy of"}, props: []prop{
		{name: "education.educational_institution.students_graduates", target: "education.education", cvt: []string{"education.education.student", "education.education.degree"}},
		{name: "location.location.containedby", target: "location.location"},
	}},
	{name: "film.film_character", weight: 2, style: []string{"Captain", "Doctor", "Agent", "Lady"}, props: []prop{
		{name: "film.film_character.portrayed_in_films", target: "film.performance", cvt: []string{"film.performance.actor", "film.performance.film"}},
	}},
	{name: "aviation.airport", weight: 0.5, style: []string{"Airport"}, props: []prop{
		{name: "aviation.airport.serves", target: "location.location"},
	}},
	{name: "award.award", weight: 0.2, style: []string{"Award for", "Prize of", "Medal of"}, props: []prop{
		{name: "award.award.presented_by", target: "organization.organization"},
	}},
	{name: "people.profession", weight: 0.3, style: []string{"Profession"}},
	{name: "religion.religion", weight: 0.05, style: []string{"Faith of"}},
	{name: "film.film_genre", weight: 0.1, style: []string{"Genre"}},
	{name: "time.time_zone", weight: 0.02, style: []string{"Time Zone"}},
	{name: "music.genre", weight: 0.2, style: []string{"Music"}},
	{name: "music.record_label", weight: 0.3, style: []string{"Records"}},
	{name: "music.release_format", weight: 0.01, style: []string{"Format"}},
	{name: "book.book_subject", weight: 0.2, style: []string{"Subject"}},
	{name: "finance.currency", weight: 0.03, style: []string{"Currency"}},
	{name: "government.form_of_government", weight: 0.01, style: []string{"Regime"}},
	{name: "language.language_family", weight: 0.01, style: []string{"Family"}},
	{name: "business.industry", weight: 0.1, style: []string{"Industry"}},
	{name: "sports.sport", weight: 0.02, style: []string{"Sport"}},
	{name: "sports.position", weight: 0.02, style: []string{"Position"}},
	{name: "education.degree", weight: 0.01, style: []string{"Degree in"}},
	{name: "government.government_office", weight: 0.1, style: []string{"Office of"}},
	{name: "award.award_ceremony", weight: 0.1, style: []string{"Ceremony"}},
	{name: "film.performance", cvt: true, props: []prop{
		{name: "film.performance.film", target: "film.film"},
		{name: "film.performance.actor", target: "people.person"},
		{name: "film.performance.character", target: "film.film_character"}}},
	{name: "people.marriage", cvt: true, props: []prop{
		{name: "people.marriage.spouse", target: "people.person"},
		{name: "people.marriage.location_of_ceremony", target: "location.location"}}},
	{name: "education.education", cvt: true, props: []prop{
		{name: "education.education.institution", target: "education.university"},
		{name: "education.education.degree", target: "education.degree"},
		{name: "education.education.student", target: "people.person"}}},
	{name: "sports.sports_team_roster", cvt: true, props: []prop{
		{name: "sports.sports_team_roster.team", target: "sports.sports_team"},
		{name: "sports.sports_team_roster.position", target: "sports.position"},
		{name: "sports.sports_team_roster.player", target: "people.person"}}},
	{name: "government.government_position_held", cvt: true, props: []prop{
		{name: "government.government_position_held.office_position_or_title", target: "government.government_office"},
		{name: "government.government_position_held.jurisdiction_of_office", target: "location.country"}}},
	{name: "award.award_honor", cvt: true, props: []prop{
		{name: "award.award_honor.award", target: "award.award"},
		{name: "award.award_honor.ceremony", target: "award.award_ceremony"}}},
}

// Domains, type words and property words the synthetic long tail of the
// schema is made from (Freebase has ~80 domains and thousands of
// properties, most of them rare).
var (
	domains = []string{"american_football", "architecture", "astronomy", "automotive", "aviation", "award", "base", "biology",
		"book", "broadcast", "business", "chemistry", "comic_books", "computer", "cvg", "education", "fictional_universe",
		"film", "food", "geography", "government", "law", "library", "location", "medicine", "military", "music", "olympics",
		"organization", "people", "periodicals", "religion", "soccer", "sports", "theater", "time", "travel", "tv",
		"visual_art", "wine"}
	typeWords = []string{"work", "event", "series", "episode", "program", "product", "season", "group", "topic",
		"collection", "edition", "designer", "producer", "venue", "format", "role", "title", "period", "site", "feature",
		"unit", "version", "company", "structure", "species", "character"}
	propWords = []string{"name", "award", "location", "member", "subject", "author", "creator", "owner", "parent",
		"part", "category", "country", "language", "genre", "date", "place", "founder", "publisher", "designer",
		"producer", "director", "series", "season", "episode", "team", "sponsor", "winner", "nominee", "editor",
		"origin", "region", "venue", "host", "partner", "successor", "predecessor", "source", "medium", "material",
		"style", "period", "influenced_by", "notable", "related", "instance", "version", "format", "operator", "manufacturer"}
)

// relation is one relation of the generated schema.
type relation struct {
	name   string
	words  string // the property words, for question text
	target int    // index of the tail's type
	cvt    []int  // for a CVT relation: the relations the new node emits
	date   dateEnd
}

// dateEnd says which end of a fact's time a relation to a date literal
// gives.
type dateEnd uint8

const (
	noDate dateEnd = iota
	dateFrom
	dateTo
)

// etype is one entity type of the generated schema, with its id range.
type etype struct {
	name   string
	weight float64
	hub    []string
	cvt    bool
	style  []string
	// literal marks the date literals' type: its tails are drawn
	// uniformly, not Zipf-wise as a hub's.
	literal bool
	rels    []int // relations its entities emit, most frequent first
	lo, n   int32 // entity ids [lo, lo+n)
	relZ    *rand.Zipf
	tailZ   *rand.Zipf
}

// schema is the generated type system: core types first, then synthetic
// ones until nRel relations exist.
type schema struct {
	types []etype
	rels  []relation
}

// buildSchema builds the schema of nRel relations; with literals, the
// dated CVTs emit from and to edges to date literals (Config.Complex).
func buildSchema(r *rand.Rand, nRel int, literals bool) (*schema, error) {
	s := &schema{}
	typeIdx := map[string]int{}
	relIdx := map[string]int{}
	core := withDates(core, literals)
	for _, ts := range core {
		typeIdx[ts.name] = len(s.types)
		s.types = append(s.types, etype{name: ts.name, weight: ts.weight, hub: ts.hub, cvt: ts.cvt, style: ts.style, literal: ts.name == dateType || ts.name == numberType})
	}
	addRel := func(name string, target int) int {
		if i, ok := relIdx[name]; ok {
			return i
		}
		relIdx[name] = len(s.rels)
		w := name[strings.LastIndexByte(name, '.')+1:]
		s.rels = append(s.rels, relation{name: name, words: strings.ReplaceAll(w, "_", " "), target: target})
		return len(s.rels) - 1
	}
	lookup := func(name string) (int, error) {
		i, ok := typeIdx[name]
		if !ok {
			return 0, fmt.Errorf("synth: core schema names unknown type %q", name)
		}
		return i, nil
	}
	// CVT types' relations first, so CVT props can refer to them.
	for ti, ts := range core {
		if !ts.cvt {
			continue
		}
		for _, p := range ts.props {
			t, err := lookup(p.target)
			if err != nil {
				return nil, err
			}
			ri := addRel(p.name, t)
			switch {
			case strings.HasSuffix(p.name, ".from"):
				s.rels[ri].date = dateFrom
			case strings.HasSuffix(p.name, ".to"):
				s.rels[ri].date = dateTo
			}
			s.types[ti].rels = append(s.types[ti].rels, ri)
		}
	}
	for ti, ts := range core {
		if ts.cvt {
			continue
		}
		for _, p := range ts.props {
			t, err := lookup(p.target)
			if err != nil {
				return nil, err
			}
			ri := addRel(p.name, t)
			for _, c := range p.cvt {
				ci, ok := relIdx[c]
				if !ok {
					return nil, fmt.Errorf("synth: core schema: CVT relation %q undefined", c)
				}
				s.rels[ri].cvt = append(s.rels[ri].cvt, ci)
			}
			s.types[ti].rels = append(s.types[ti].rels, ri)
		}
	}
	// Targets of synthetic relations: named types, drawn by weight so the
	// big types (people, places, films) receive most edges.
	var named []int
	var cum []float64
	total := 0.0
	for i, t := range s.types {
		if t.cvt || t.weight == 0 && t.hub == nil {
			continue
		}
		w := t.weight
		if t.hub != nil {
			w = 0.5
		}
		total += w
		named = append(named, i)
		cum = append(cum, total)
	}
	pickTarget := func() int {
		x := r.Float64() * total
		for i, c := range cum {
			if x < c {
				return named[i]
			}
		}
		return named[len(named)-1]
	}
	// The synthetic long tail: types in every domain, each with a handful
	// of properties; type weights fall off as 1/rank so a few synthetic
	// types are common and most are rare.
	rank := 0
	for len(s.rels) < nRel {
		d := domains[rank%len(domains)]
		w := typeWords[(rank/len(domains))%len(typeWords)]
		if k := rank / (len(domains) * len(typeWords)); k > 0 {
			w = fmt.Sprintf("%s_%d", w, k)
		}
		name := d + "." + w
		rank++
		if _, ok := typeIdx[name]; ok {
			continue
		}
		ti := len(s.types)
		typeIdx[name] = ti
		s.types = append(s.types, etype{name: name, weight: 3.0 / float64(rank+2), style: []string{strings.ReplaceAll(titleWord(w), "_", " ")}})
		np := 6 + r.IntN(14)
		for j := 0; j < np && len(s.rels) < nRel; j++ {
			p := propWords[r.IntN(len(propWords))]
			if r.IntN(3) == 0 {
				p += "_" + propWords[r.IntN(len(propWords))]
			}
			rn := name + "." + p
			if _, ok := relIdx[rn]; ok {
				continue
			}
			s.types[ti].rels = append(s.types[ti].rels, addRel(rn, pickTarget()))
		}
	}
	for i := range s.types {
		if n := len(s.types[i].rels); n > 1 {
			s.types[i].relZ = rand.NewZipf(r, 1.3, 1, uint64(n-1))
		}
	}
	return s, nil
}

// withDates returns types, with literals a copy in which the dated CVT
// types emit from and to edges to a date literal type, and places an
// area, a numeric literal.
func withDates(types []typeSpec, literals bool) []typeSpec {
	if !literals {
		return types
	}
	out := make([]typeSpec, 0, len(types)+1)
	dated := map[string]bool{}
	for _, t := range datedCVTs {
		dated[t] = true
	}
	for _, t := range types {
		t.props = slices.Clone(t.props)
		if dated[t.name] {
			t.props = append(t.props, prop{name: t.name + ".from", target: dateType}, prop{name: t.name + ".to", target: dateType})
		}
		if t.name == "location.location" {
			t.props = append(t.props, prop{name: areaRel, target: numberType})
		}
		for i, p := range t.props {
			if p.cvt != nil && dated[p.target] {
				t.props[i].cvt = append(slices.Clone(p.cvt), p.target+".from", p.target+".to")
			}
		}
		out = append(out, t)
	}
	return append(out, typeSpec{name: dateType, hub: dates()}, typeSpec{name: numberType, hub: numbers()})
}

func titleWord(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}
