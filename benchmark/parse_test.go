package benchmark

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/schema"
)

// Real lines, copied from the shared data files named in each case.
const (
	pq2Line   = "which nationality is frederica_of_mecklenburg-strelitz 's couple ?\tunited_kingdom(united_kingdom/)\tfrederica_of_mecklenburg-strelitz#spouse#ernest_augustus_i_of_hanover#nationality#united_kingdom#<end>#united_kingdom"
	pq3Line   = "What is the name of the location of other half of carlos_thompson 's spouse ?\tfire_island(fire_island/)\tcarlos_thompson#spouse#lilli_palmer#spouse#rex_harrison#location#fire_island#<end>#fire_island"
	pqlPG     = " what is the rating of Earthquake 's tracks ?\tPG_(USA)(PG_(USA)/)\tEarthquake#__music__recording__tracks#Earthquake#__film__film__rating#PG_(USA)"
	pqlSolst  = " what is the versions of Solstice 's versions ?\tSolstice_(T4L_Remix)(Solstice/Solstice_(T4L_Remix)/Solstice_(original)/)\tSolstice#__music__single__versions#Solstice#__music__single__versions#Solstice_(T4L_Remix)"
	metaLine1 = "what films did [Shahid Kapoor] act in\tHaider|Jab We Met|Chance Pe Dance"
	metaLine2 = "the films acted by [Shaun White] were in which genres\tSport|Documentary"
	webqPath  = "Spain -> travel.tour_operator.travel_destinations ->   Adventures by Disney - 5-Night Mediterranean Magic Cruise -> travel.tour_operator.travel_destinations -> France"
)

func TestParsePathQuestion(t *testing.T) {
	for _, c := range []struct {
		name, line string
		text       string
		answers    []string
		start      string
		rels, ents []string
	}{
		{"PQ-2H", pq2Line, "which nationality is frederica_of_mecklenburg-strelitz 's couple ?", []string{"united_kingdom"},
			"frederica_of_mecklenburg-strelitz", []string{"spouse", "nationality"}, []string{"ernest_augustus_i_of_hanover", "united_kingdom"}},
		{"PQ-3H", pq3Line, "What is the name of the location of other half of carlos_thompson 's spouse ?", []string{"fire_island"},
			"carlos_thompson", []string{"spouse", "spouse", "location"}, []string{"lilli_palmer", "rex_harrison", "fire_island"}},
		{"PQL bracket name", pqlPG, "what is the rating of Earthquake 's tracks ?", []string{"PG_(USA)"},
			"Earthquake", []string{"__music__recording__tracks", "__film__film__rating"}, []string{"Earthquake", "PG_(USA)"}},
		{"PQL bracketed golds", pqlSolst, "what is the versions of Solstice 's versions ?", []string{"Solstice", "Solstice_(T4L_Remix)", "Solstice_(original)"},
			"Solstice", []string{"__music__single__versions", "__music__single__versions"}, []string{"Solstice", "Solstice_(T4L_Remix)"}},
	} {
		q, err := ParsePathQuestion(c.line)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if q.Text != c.text || !reflect.DeepEqual(q.Answers, c.answers) || len(q.Gold) != 1 ||
			q.Gold[0].Start != c.start || !reflect.DeepEqual(q.Gold[0].Relations(), c.rels) ||
			!reflect.DeepEqual(q.Gold[0].Entities, c.ents) || q.Hops != len(c.rels) ||
			!reflect.DeepEqual(q.Entities, []string{c.start}) {
			t.Errorf("%s: got %+v", c.name, q)
		}
	}
	for _, bad := range []string{
		"no tabs here",
		"q\tans(ans/)",             // two columns
		"q\tans\ts#r#ans",          // no gold group
		"q\tans(/)\ts#r#ans",       // empty gold set
		"q\tans(ans/)\ts#r",        // even path
		"q\tans(ans/)\ts##ans",     // empty relation
		"\tans(ans/)\ts#r#ans",     // empty question
		"q\tans(ans/)\t#<end>#ans", // path cut to nothing
		"q\tx)y(z\ts#r#e",          // unbalanced
	} {
		if _, err := ParsePathQuestion(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParsePathQuestion(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestReadPathQuestionDemo(t *testing.T) {
	qs, err := ReadPathQuestion(context.Background(), strings.NewReader(string(demo.Questions())), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Fatal("no demo questions")
	}
	q := qs[2] // who starred in inception ?
	if q.ID != "questions.tsv:3" || len(q.Answers) != 5 || q.Answers[4] != "Marion_Cotillard" || q.Hops != 1 {
		t.Errorf("demo question 3 = %+v", q)
	}
	_, err = ReadPathQuestion(context.Background(), strings.NewReader(pq2Line+"\nbad line\n"), "x.txt")
	if err == nil || !strings.HasPrefix(err.Error(), "x.txt:2: ") {
		t.Errorf("error = %v, want x.txt:2: prefix", err)
	}
}

func TestMetaQAPath(t *testing.T) {
	for _, c := range []struct {
		qtype string
		want  []schema.Step
	}{
		{"movie_to_director", []schema.Step{{Rel: "directed_by", Dir: schema.Forward}}},
		{"director_to_movie", []schema.Step{{Rel: "directed_by", Dir: schema.Inverse}}},
		{"tag_to_movie", []schema.Step{{Rel: "has_tags", Dir: schema.Inverse}}},
		{"movie_to_tags", []schema.Step{{Rel: "has_tags", Dir: schema.Forward}}},
		{"actor_to_movie_to_director", []schema.Step{{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "directed_by", Dir: schema.Forward}}},
		{"movie_to_writer_to_movie", []schema.Step{{Rel: "written_by", Dir: schema.Forward}, {Rel: "written_by", Dir: schema.Inverse}}},
		{"writer_to_movie_to_year", []schema.Step{{Rel: "written_by", Dir: schema.Inverse}, {Rel: "release_year", Dir: schema.Forward}}},
		{"movie_to_language", []schema.Step{{Rel: "in_language", Dir: schema.Forward}}},
		{"movie_to_genre", []schema.Step{{Rel: "has_genre", Dir: schema.Forward}}},
		{"movie_to_imdbrating", []schema.Step{{Rel: "has_imdb_rating", Dir: schema.Forward}}},
		{"movie_to_imdbvotes", []schema.Step{{Rel: "has_imdb_votes", Dir: schema.Forward}}},
	} {
		got, err := MetaQAPath(c.qtype)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("MetaQAPath(%q) = %v, %v; want %v", c.qtype, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "movie", "actor_to_director", "movie_to_movie", "movie_to_spaceship"} {
		if _, err := MetaQAPath(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("MetaQAPath(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestParseMetaQA(t *testing.T) {
	q, err := ParseMetaQA(metaLine1)
	if err != nil || q.Entities[0] != "Shahid Kapoor" || !reflect.DeepEqual(q.Answers, []string{"Haider", "Jab We Met", "Chance Pe Dance"}) {
		t.Errorf("ParseMetaQA(line1) = %+v, %v", q, err)
	}
	qs, err := ReadMetaQA(context.Background(), strings.NewReader(metaLine1+"\n"+metaLine2+"\n"), "qa.txt",
		strings.NewReader("actor_to_movie\nactor_to_movie_to_genre\n"), "qtype.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[1].Hops != 2 || qs[1].Type != "actor_to_movie_to_genre" || qs[1].Gold[0].Start != "Shaun White" ||
		!reflect.DeepEqual(qs[1].Gold[0].Steps, []schema.Step{{Rel: "starred_actors", Dir: schema.Inverse}, {Rel: "has_genre", Dir: schema.Forward}}) {
		t.Errorf("ReadMetaQA = %+v", qs)
	}
	_, err = ReadMetaQA(context.Background(), strings.NewReader(metaLine1+"\n"+metaLine2+"\n"), "qa.txt",
		strings.NewReader("actor_to_movie\n"), "qtype.txt")
	if !errors.Is(err, ErrSyntax) || !strings.HasPrefix(err.Error(), "qtype.txt:2:") {
		t.Errorf("short qtype file: error = %v", err)
	}
	for _, bad := range []string{"no tab [x]", "no entity\ta", "empty []\ta", "q [x]\t|", "q [x]\ta\tb"} {
		if _, err := ParseMetaQA(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMetaQA(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestParseReasoningPath(t *testing.T) {
	got, err := ParseReasoningPath(webqPath)
	want := [][3]string{
		{"Spain", "travel.tour_operator.travel_destinations", "Adventures by Disney - 5-Night Mediterranean Magic Cruise"},
		{"Adventures by Disney - 5-Night Mediterranean Magic Cruise", "travel.tour_operator.travel_destinations", "France"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseReasoningPath = %v, %v", got, err)
	}
	for _, bad := range []string{"", "A -> r", "A -> r -> B -> s", "A ->  -> B"} {
		if _, err := ParseReasoningPath(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseReasoningPath(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
	input := "[INST] <<SYS>>\n<</SYS>>\nBased on the reasoning paths, please answer.\n\nReasoning Paths:\nJamaica -> language.human_language.countries_spoken_in -> Jamaican English\nJamaica -> location.country.languages_spoken -> Jamaican Creole English Language\n\nQuestion:\nwhat does jamaican people speak? [/INST]"
	paths, err := ReasoningPaths(input)
	if err != nil || len(paths) != 2 || paths[1][0][2] != "Jamaican Creole English Language" {
		t.Errorf("ReasoningPaths = %v, %v", paths, err)
	}
	if paths, err := ReasoningPaths("Reasoning Paths:\n\nQuestion:\nq"); err != nil || len(paths) != 0 {
		t.Errorf("empty block: %v, %v", paths, err)
	}
}

// TestErrorsNameThePathAsGiven: a bad line is reported with the file's
// path as the user gave it, while question ids keep the base name.
func TestErrorsNameThePathAsGiven(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "q.txt")
	if err := os.WriteFile(bad, []byte("who?\tx(x/)\tA#r#x\nno tabs here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPathQuestion(context.Background(), bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":2: ") {
		t.Errorf("err = %v, want it to start with %s:2:", err, bad)
	}
	good := filepath.Join(dir, "ok.txt")
	if err := os.WriteFile(good, []byte("who?\tx(x/)\tA#r#x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := LoadPathQuestion(context.Background(), good)
	if err != nil || qs[0].ID != "ok.txt:1" {
		t.Errorf("ids: %+v, %v; want ok.txt:1", qs, err)
	}
	if _, err := LoadMetaQA(context.Background(), bad, ""); err == nil || !strings.Contains(err.Error(), bad+":") {
		t.Errorf("metaqa: err = %v, want the path as given", err)
	}
}
