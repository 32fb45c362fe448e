package cmd

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/doctor"
	"github.com/zklock/zklock/internal/runner"
	"github.com/zklock/zklock/lockexec"
)

// doctorOptions are doctor's flags.
type doctorOptions struct {
	Global *globalOptions
	Path   string
}

func newCmdDoctor(g *globalOptions, u *ui, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	o := &doctorOptions{Global: g}
	c := &cobra.Command{
		Use:   "doctor [--path PATH]",
		Short: "Check the servers, the session, the credentials and a lock path",
		Long: `Check, with the same connection flags as run, what zklock needs, and print
one line per check:

  each server of --servers on its own: reachable (the TCP connect's time),
  the TLS handshake when TLS is on, a session with its negotiated timeout
  and the median round trip of a read;
  a session through the whole connect string, as run takes one, and its
  timeout against the smallest safe one for its round trip (on an
  ensemble, one that rides out a leader election without stopping a
  command whose lock is kept; a standalone server has no election, so
  there only a slow reply and a reconnect count);
  the credentials (--auth, --auth-file, --jaas, --sasl, x509) accepted;
  with --path: that this client may create the path, create a child, read
  it and delete it. It creates one uniquely named ephemeral child and
  deletes it, and deletes the path again if it had to create it: nothing
  is left behind.

Every check runs, whatever failed before it. A read or a path check that
loses its connection (a member down, a leader election) is sent again
once the session is back, as run rides out an election, and the line
says so. Exit status: 0 when all
passed; 69 when a server, its TLS handshake or the session failed (one
member of an ensemble down is a failure, though run would still work), or
the session timeout is shorter than the smallest safe one; 77
when only a refusal failed: credentials or an ACL.`,
		Example: `  zklock doctor
  zklock doctor --servers zk1:2181,zk2:2181,zk3:2181/locks --path /backup
  zklock doctor --tls-ca ca.pem --auth-file ~/.zk-auth --path /deploy`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.run(c.Context(), u)
		},
	}
	c.Flags().Var((*lockPathValue)(&o.Path), "path", "lock path to check create, read and delete at (default: none)")
	return c
}

func (o *doctorOptions) run(ctx context.Context, u *ui) error {
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return err
	}
	// The check assumes run's default --kill-grace.
	safe := func(rtt time.Duration, tls bool) time.Duration {
		return runner.SafeTimeout(rtt, tls, lockexec.DefaultKillGrace)
	}
	link := func(rtt time.Duration, tls bool) time.Duration {
		return runner.LinkTimeout(rtt, tls, lockexec.DefaultKillGrace)
	}
	return doctor.Diagnose(ctx, doctor.Options{Conn: conn, Path: o.Path, Out: u.out, SafeTimeout: safe, LinkTimeout: link,
		Symbols: canDraw(u.out, os.Getenv), Color: u.colorOut})
}
