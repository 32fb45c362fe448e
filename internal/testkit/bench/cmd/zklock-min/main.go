// Command zklock-min is the floor every lock CLI on ZooKeeper shares: the
// smallest correct Go program that runs a command under a ZooKeeper lock,
// built and measured by the benchmark driver (internal/testkit/bench) beside
// zklock in the same run.
//
//	zklock-min --servers HOST:PORT --path /lock -- COMMAND [ARGS...]
//
// It does what the recipe needs and nothing more: connect, create an
// ephemeral-sequential node (parents as containers), list the children,
// wait herd-free on the node just ahead if there is one, run the command,
// close the session (which deletes the node) and exit with the command's
// code. It has none of zklock's safety: no check that the session is still
// confirmed while the command runs, no watchdog, no own-node watch, no
// recovery of a create whose reply was lost, no signal forwarding. What
// zklock costs above it is the price of those.
package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("zklock-min", flag.ContinueOnError)
	servers := fs.String("servers", "127.0.0.1:2181", "ZooKeeper connect string")
	path := fs.String("path", "", "lock path")
	if err := fs.Parse(os.Args[1:]); err != nil || *path == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: zklock-min --servers HOST:PORT --path /lock -- COMMAND [ARGS...]")
		return 64
	}
	code, err := lockAndRun(strings.Split(*servers, ","), *path, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock-min:", err)
		return 69
	}
	return code
}

// lockAndRun holds the lock at path while argv runs, and returns its exit
// code.
func lockAndRun(servers []string, path string, argv []string) (int, error) {
	conn, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(quiet{}))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if err := awaitSession(events); err != nil {
		return 0, err
	}
	node, err := join(conn, path)
	if err != nil {
		return 0, err
	}
	if err := await(conn, path, node); err != nil {
		return 0, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), nil
	case err != nil:
		return 127, nil
	}
	return 0, nil
}

func awaitSession(events <-chan zk.Event) error {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return nil
			}
		case <-timeout:
			return errors.New("no session within 10s")
		}
	}
}

// join creates our contender node, named as Curator names it, creating
// missing parents as containers.
func join(conn *zk.Conn, path string) (string, error) {
	var id [16]byte
	rand.Read(id[:])
	name := fmt.Sprintf("%s/_c_%x-lock-", path, id)
	for {
		node, err := conn.Create(name, nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
		if !errors.Is(err, zk.ErrNoNode) {
			return node, err
		}
		for i := 1; i <= len(path); i++ {
			if i < len(path) && path[i] != '/' {
				continue
			}
			_, err := conn.CreateContainer(path[:i], nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return "", err
			}
		}
	}
}

// await returns once node is the first in the queue, watching only the
// node just ahead of it.
func await(conn *zk.Conn, path, node string) error {
	own := node[strings.LastIndexByte(node, '/')+1:]
	for {
		children, _, err := conn.Children(path)
		if err != nil {
			return err
		}
		sort.Slice(children, func(i, j int) bool { return seq(children[i]) < seq(children[j]) })
		i := sort.Search(len(children), func(i int) bool { return seq(children[i]) >= seq(own) })
		if i == len(children) || children[i] != own {
			return errors.New("our node is gone")
		}
		if i == 0 {
			return nil
		}
		ok, _, ch, err := conn.ExistsW(path + "/" + children[i-1])
		if err != nil {
			return err
		}
		if ok {
			<-ch
		}
	}
}

// seq is a contender's sequence number, the ten digits after "-lock-".
func seq(name string) int64 {
	n, _ := strconv.ParseInt(name[strings.LastIndex(name, "-lock-")+len("-lock-"):], 10, 64)
	return n
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
