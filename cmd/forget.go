package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/inspect"
)

// forgetOptions are forget's flags.
type forgetOptions struct {
	Global *globalOptions
	Paths  []string
}

func newCmdForget(g *globalOptions, u *ui, runF func(context.Context, *forgetOptions) error) *cobra.Command {
	o := &forgetOptions{Global: g}
	c := &cobra.Command{
		Use:   "forget --path PATH [--path PATH...]",
		Short: "Forget the last success recorded by --once-per, so the next run goes ahead",
		Long: `Delete the record of the last successful run that run and tryrun
--once-per keep at --path, so that the next run with --once-per runs its
command whatever its window. forget prints the record it deleted: its time
on the server's clock (UTC), and the host, pid and command that recorded it.
With no record it says so and exits 0.

Give the same --path flags as the job: with several, the record is kept at
the first in sorted order, and forget deletes that one.

A success recorded while forget deletes the record is the one deleted and
printed (exit 75 if new successes keep being recorded). Deleting needs the
right to delete in the lock path (exit 77 otherwise). Once the record is
gone, an empty lock path is reaped by the server, as after any run.`,
		Example: `  zklock forget --path /locks/nightly-report
  zklock forget --path /locks/db --path /locks/report`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.run(c.Context(), u)
		},
	}
	c.Flags().StringArrayVar(&o.Paths, "path", nil, "lock path of the job (required); repeat as the job does")
	return c
}

// run validates the flags and hands them to the runner.
func (o *forgetOptions) run(ctx context.Context, u *ui) error {
	if err := validatePaths(o.Paths); err != nil {
		return err
	}
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return err
	}
	err = inspect.Forget(ctx, inspect.ForgetOptions{Conn: conn, Paths: o.Paths, Out: u.out, Logf: u.logf})
	return asConflict(err, ExitBusy)
}
