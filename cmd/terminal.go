package cmd

import (
	"io"

	"github.com/zklock/zklock/internal/view"
	"golang.org/x/sys/unix"
)

// envProgress asks for --progress from the environment (CI logs): the
// plain lines of the status line where there is no terminal to draw it.
const envProgress = "ZKLOCK_PROGRESS"

// terminalWidth is w's width in columns, 80 if it cannot be told.
func terminalWidth(w io.Writer) int {
	if s := terminalSize(w); s.Cols > 0 {
		return s.Cols
	}
	return 80
}

// terminalSize is the size of the terminal w writes to, zero if it cannot
// be told.
func terminalSize(w io.Writer) view.Screen {
	if f, ok := fileOf(w); ok {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil {
			return view.Screen{Rows: int(ws.Row), Cols: int(ws.Col)}
		}
	}
	return view.Screen{}
}
