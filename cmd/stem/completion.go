package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// The bash and zsh scripts ask the binary itself what may come next: the
// CLI answers `stem ARGS... --generate-bash-completion` with the
// subcommands, or with the flags matching a word that starts with "-"
// (urfave/cli's completion protocol, on because the app sets
// EnableBashCompletion). So they never go stale as commands and flags
// change. Where stem offers nothing (a flag's value, an argument) the
// shell completes file names. NAME is replaced by the program's name.
const bashCompletion = `# bash completion for NAME; load with: source <(NAME completion bash)
_NAME_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local -a req=("${COMP_WORDS[@]:0:COMP_CWORD}")
	[[ $cur == -* ]] && req+=("$cur")
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$("${req[@]}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o bashdefault -o default -F _NAME_complete NAME
`

// zshCompletion asks with $0 set to zsh in the environment, which makes
// the CLI print "name:usage" pairs that _describe shows as descriptions.
const zshCompletion = `#compdef NAME
# zsh completion for NAME; load with: source <(NAME completion zsh) (after compinit),
# or save it as _NAME in a directory of $fpath.
_NAME() {
	local -a opts
	local cur=${words[CURRENT]}
	if [[ $cur == -* ]]; then
		opts=("${(@f)$(env 0=zsh ${words[1,CURRENT-1]} $cur --generate-bash-completion 2>/dev/null)}")
	else
		opts=("${(@f)$(env 0=zsh ${words[1,CURRENT-1]} --generate-bash-completion 2>/dev/null)}")
	fi
	if [[ -n ${opts[1]} ]]; then
		_describe 'NAME' opts
	else
		_files
	fi
}
compdef _NAME NAME
`

// completionShells are the shells stem completion writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Commands, subcommands and flags complete on TAB; flag values and arguments complete\n" +
			"as file names. bash and zsh ask stem itself as you type, so they follow the binary on\n" +
			"your PATH; fish's script lists the commands and flags of this binary (regenerate it\n" +
			"after an upgrade).\n\n" +
			"  source <(stem completion bash)                                # bash, this shell\n" +
			"  stem completion bash > ~/.local/share/bash-completion/completions/stem\n" +
			"  stem completion zsh > \"${fpath[1]}/_stem\"                     # zsh (then restart it)\n" +
			"  stem completion fish > ~/.config/fish/completions/stem.fish   # fish",
		BashComplete: func(c *cli.Context) {
			fmt.Fprintln(c.App.Writer, strings.Join(completionShells, "\n"))
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("completion takes one shell: bash, zsh or fish")
			}
			return writeCompletion(c.App.Writer, c.App, c.Args().First())
		},
	}
}

// completeSubcommands completes a command group (stem kg, stem train):
// its subcommands without the "help" one cli adds (help is --help), or
// its flags after a word starting with "-". Like cli's own completer it
// reads the word being completed from os.Args, where the shell put it,
// and names each command with its usage for zsh (which sets $0).
func completeSubcommands(cmd *cli.Command) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		if n := len(os.Args); n > 2 && strings.HasPrefix(os.Args[n-2], "-") {
			cli.DefaultCompleteWithFlags(cmd)(c)
			return
		}
		zsh := strings.HasSuffix(os.Getenv("0"), "zsh")
		for _, sub := range cmd.Subcommands {
			if sub.Hidden || sub.Name == "help" {
				continue
			}
			for _, name := range sub.Names() {
				if zsh {
					fmt.Fprintf(c.App.Writer, "%s:%s\n", name, sub.Usage)
				} else {
					fmt.Fprintln(c.App.Writer, name)
				}
			}
		}
	}
}

// writeCompletion prints app's completion script for shell.
func writeCompletion(w io.Writer, app *cli.App, shell string) error {
	var script string
	switch shell {
	case "bash":
		script = strings.ReplaceAll(bashCompletion, "NAME", app.Name)
	case "zsh":
		script = strings.ReplaceAll(zshCompletion, "NAME", app.Name)
	case "fish":
		var err error
		if script, err = app.ToFishCompletion(); err != nil {
			return fmt.Errorf("completion fish: %w", err)
		}
		// cli's fish script lists commands and flags; the shells are
		// stem completion's arguments.
		script += fmt.Sprintf("complete -c %s -n '__fish_seen_subcommand_from completion' -f -a '%s'\n", app.Name, strings.Join(completionShells, " "))
	default:
		return fmt.Errorf("completion: unknown shell %q; stem completes %s", shell, strings.Join(completionShells, ", "))
	}
	_, err := io.WriteString(w, script)
	return err
}
