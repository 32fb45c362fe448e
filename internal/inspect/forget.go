package inspect

import (
	"context"
	"fmt"
	"io"

	"github.com/zklock/zklock/internal/success"
	"github.com/zklock/zklock/internal/view"
	"github.com/zklock/zklock/zkconn"
)

// ForgetOptions describe one forget.
type ForgetOptions struct {
	Conn zkconn.Options
	// Paths are the locks a job holds, as Options.Paths: the record
	// forgotten is the one a run of that job keeps (success.JobPath).
	Paths []string
	Out   io.Writer
	// Logf prints progress for -v; it may be nil.
	Logf func(format string, args ...any)
}

// Forget deletes the success record of the job that holds o.Paths, so
// that its next run under a window goes ahead, and says what it deleted.
// A record that kept being rewritten (success.ErrChurn: runs keep
// succeeding) is a conflict, as IsConflict says.
func Forget(ctx context.Context, o ForgetOptions) error {
	p := success.JobPath(o.Paths)
	if o.Logf != nil && len(o.Paths) > 1 {
		o.Logf("the success record of these %d locks is kept at %s, the first in sorted order", len(o.Paths), p)
	}
	client, err := zkconn.Dial(ctx, o.Conn)
	if err != nil {
		return err
	}
	defer client.Close()
	s, ok, err := success.Forget(ctx, client, p)
	if err != nil {
		return err
	}
	if !ok {
		_, err = fmt.Fprintf(o.Out, "no success recorded at %s\n", view.Escape(p))
		return err
	}
	if o.Logf != nil {
		o.Logf("deleted %s", zkconn.Join(p, success.NodeName))
	}
	_, err = fmt.Fprintln(o.Out, view.Forgotten(s))
	return err
}
