package main

import (
	"encoding/json"

	stemversion "github.com/stem-kgqa/stem/internal/version"
	"github.com/urfave/cli/v2"
)

// versionFlag is stem --version: the same report as stem version.
var versionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version, VCS revision, Go version and GOEXPERIMENT this binary was built with"}

func versionCommand() *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "version",
		Usage: "print the module version, VCS revision, Go version and GOEXPERIMENT this binary was built with",
		Description: "Everything comes from the build information Go embeds in the binary. A binary installed\n" +
			"with `go install github.com/stem-kgqa/stem/cmd/stem@vX.Y.Z` reports that version; one built\n" +
			"with `go build` in a git clone reports the commit and whether the tree had changes.\n\n" +
			"Example:\n  stem version --json",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object", Destination: &asJSON}},
		Action: func(c *cli.Context) error {
			if asJSON {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(stemversion.Read())
			}
			return stemversion.Read().WriteText(c.App.Writer, "stem")
		},
	}
}
