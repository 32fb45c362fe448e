package cmd

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/zklock/zklock/internal/exporter"
	"github.com/zklock/zklock/zkconn"
)

// exporterOptions are exporter's flags.
type exporterOptions struct {
	Global   *globalOptions
	Path     string
	Listen   listenValue
	MaxPaths limitValue
}

func newCmdExporter(g *globalOptions, u *ui, runF func(context.Context, *exporterOptions) error) *cobra.Command {
	o := &exporterOptions{Global: g, Path: "/", Listen: exporter.DefaultListen, MaxPaths: exporter.DefaultMaxPaths}
	c := &cobra.Command{
		Use:   "exporter [--path PATH] [--listen HOST:PORT] [--max-paths N]",
		Short: "Serve every lock below --path to Prometheus, live",
		Long: `Serve /metrics for Prometheus on --listen: for each lock path below
--path, how many hold it and wait for it, how long the oldest holder has
held it and the oldest waiter has waited, and who holds it (host, pid,
command's name, flavor), with the exporter's own health. It follows the
tree with the watches of list --watch, not by polling, and never creates
a node or holds a lock. While the servers are away it keeps serving, with
zklock_exporter_up at 0, and follows them again once they are back. It
runs until SIGTERM or Ctrl-C, its normal end (exit status 0).

At most --max-paths lock paths are exported, the first in sorted order;
the rest are counted in zklock_exporter_lock_paths_dropped.`,
		Example: `  zklock exporter --path /locks
  zklock exporter --path /locks --listen :9713 --max-paths 200`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(c.Context(), o)
			}
			return o.run(c.Context(), u)
		},
	}
	c.Flags().StringVar(&o.Path, "path", "/", "export every lock at or below the node `PATH`")
	c.Flags().Var(&o.Listen, "listen", "host and port to serve /metrics on")
	c.Flags().Var(&o.MaxPaths, "max-paths", "export at most this many lock paths")
	return c
}

// run validates the flags and hands them to the exporter.
func (o *exporterOptions) run(ctx context.Context, u *ui) error {
	if err := zkconn.ValidatePath(o.Path); err != nil {
		return &UsageError{Err: err}
	}
	conn, err := o.Global.connOptions(u)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return exporter.Run(ctx, exporter.Options{Conn: conn, Path: o.Path, Listen: string(o.Listen),
		MaxPaths: int(o.MaxPaths), Warnf: u.warnf,
		Listening: func(a net.Addr) { u.logf("serving /metrics on http://%s/metrics", a) }})
}

// listenValue is --listen: a host (empty for every address) and a port,
// checked at parse time so that a typo is a usage error, not a bind
// failure after connecting.
type listenValue string

func (l *listenValue) String() string { return string(*l) }
func (l *listenValue) Type() string   { return "HOST:PORT" }

func (l *listenValue) Set(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT (as 127.0.0.1:9713, or :9713 for every address)", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q is not a port number", port)
	}
	*l = listenValue(s)
	return nil
}
