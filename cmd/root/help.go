package root

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpWidth is the width help is wrapped to: the terminal's (COLUMNS
// first), else 80, also in a pipe, since help piped to less or a file is
// still read by a person.
func helpWidth(width int) int {
	if width > 0 {
		return width
	}
	return 80
}

// setHelp makes root and every command under it print help wrapped to
// width, on the command's output (stdout, so `mcpauth login --help | less`
// works). It renders what cobra's default template does, with flag usages
// wrapped by pflag instead of on one line each.
func setHelp(root *cobra.Command, width int) {
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		w := cmd.OutOrStdout()
		desc := cmd.Long
		if desc == "" {
			desc = cmd.Short
		}
		if desc != "" {
			fmt.Fprintln(w, wrapText(strings.TrimRight(desc, "\n"), width, false))
			fmt.Fprintln(w)
		}
		writeUsage(w, cmd, width)
	})
	root.SetUsageFunc(func(cmd *cobra.Command) error {
		writeUsage(cmd.OutOrStderr(), cmd, width)
		return nil
	})
}

func writeUsage(w io.Writer, cmd *cobra.Command, width int) {
	fmt.Fprintln(w, "Usage:")
	if cmd.Runnable() {
		fmt.Fprintln(w, wrapText("  "+cmd.UseLine(), width, false))
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(w, "  %s [command]\n", cmd.CommandPath())
	}
	if len(cmd.Aliases) > 0 {
		fmt.Fprintf(w, "\nAliases:\n  %s\n", cmd.NameAndAliases())
	}
	if cmd.HasExample() {
		fmt.Fprintf(w, "\nExamples:\n%s\n", wrapText(cmd.Example, width, true))
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintln(w, "\nAvailable Commands:")
		pad := cmd.NamePadding()
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				fmt.Fprintln(w, beside("  "+c.Name(), pad+3, c.Short, width))
			}
		}
	}
	if cmd.HasAvailableLocalFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", flagUsages(cmd.LocalFlags(), width))
	}
	if cmd.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\nGlobal Flags:\n%s", flagUsages(cmd.InheritedFlags(), width))
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\n%s\n", hangingWrap(fmt.Sprintf("Use \"%s [command] --help\" for more information about a command.", cmd.CommandPath()), width, 0))
	}
}

// wrapText wraps every line of s longer than width at spaces, continuing
// at the line's own indentation. Words are never cut: a URL longer than the
// width stays whole and copyable. In examples (commands) a wrapped line
// ends in " \" so that the shell still reads one command.
func wrapText(s string, width int, commands bool) string {
	if !commands {
		s = reflow(s, width)
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		cont := indent
		if commands && !strings.Contains(line, "#") {
			cont += 4
		}
		wrapped := hangingWrap(line, width, cont)
		if commands && !strings.Contains(line, "#") {
			wrapped = strings.ReplaceAll(wrapped, "\n", " \\\n")
		}
		out = append(out, wrapped)
	}
	return strings.Join(out, "\n")
}

// hangingWrap breaks line at spaces into lines of at most width columns
// (a word wider than that stays whole), the first keeping its own start and
// the rest indented by indent spaces. In commands mode two columns are kept
// free for the " \" continuation.
func hangingWrap(line string, width, indent int) string {
	if lipgloss.Width(line) <= width {
		return line
	}
	lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
	words := strings.Fields(line)
	if len(words) == 0 {
		return ""
	}
	var lines []string
	cur := lead + words[0]
	for _, word := range words[1:] {
		if lipgloss.Width(cur)+1+lipgloss.Width(word) > width-2 {
			lines = append(lines, cur)
			cur = strings.Repeat(" ", indent) + word
			continue
		}
		cur += " " + word
	}
	return strings.Join(append(lines, cur), "\n")
}

// reflow joins the lines of each unindented paragraph of prose that has a
// line wider than width, so that it is wrapped as a whole instead of line
// by line into ragged pairs. Indented lines (lists, commands) stay as
// they are.
func reflow(s string, width int) string {
	paras := strings.Split(s, "\n\n")
	for i, p := range paras {
		lines := strings.Split(p, "\n")
		wide, indented := false, false
		for _, l := range lines {
			wide = wide || lipgloss.Width(l) > width
			indented = indented || strings.HasPrefix(l, " ")
		}
		if wide && !indented {
			paras[i] = strings.Join(lines, " ")
		}
	}
	return strings.Join(paras, "\n\n")
}

// flagUsages lays out fs's flags within width. pflag's FlagUsagesWrapped
// gives up on a line whose next word is longer than its usage column
// (MCPAUTH_ALLOW_UNREGISTERED_DEVICE_CLIENTS overflowed 80 columns), so
// the unwrapped usages are parsed (flag, then at least two spaces, then the
// usage; pflag aligns every usage to one column) and wrapped here: beside
// the flags when 30 columns are left for the text, else below each flag.
func flagUsages(fs *pflag.FlagSet, width int) string {
	type flag struct{ spec, usage string }
	var flags []flag
	col := 0
	for _, line := range strings.Split(strings.TrimRight(fs.FlagUsagesWrapped(0), "\n"), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(trimmed, "-") && len(flags) > 0 {
			flags[len(flags)-1].usage += " " + trimmed // a usage's own second line
			continue
		}
		lead := len(line) - len(trimmed)
		spec, usage, _ := strings.Cut(trimmed, "  ")
		flags = append(flags, flag{strings.Repeat(" ", lead) + spec, strings.TrimLeft(usage, " ")})
		col = max(col, lead+len(spec)+3)
	}
	var b strings.Builder
	for _, f := range flags {
		if width-col >= 40 {
			b.WriteString(beside(f.spec, col, f.usage, width))
		} else {
			b.WriteString(f.spec + "\n" + hangingWrap(strings.Repeat(" ", 10)+f.usage, width, 10))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// beside lays text out in a column starting at col, wrapped within width
// and continued at col, with label before it on the first line: the
// label's padding is kept (hangingWrap alone collapses it, which put six
// commands' descriptions out of line at 80 columns).
func beside(label string, col int, text string, width int) string {
	wrapped := hangingWrap(strings.Repeat(" ", col)+text, width, col)
	return fmt.Sprintf("%-*s", col, label) + wrapped[col:]
}
